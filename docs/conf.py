"""Sphinx configuration: API reference by autosummary, gallery from examples/."""

import os
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
# The gallery runs single-threaded numba so that build times are predictable.
os.environ.setdefault("NUMBA_NUM_THREADS", "1")

import sklearn_structured  # noqa: E402

project = "sklearn-structured"
author = "the sklearn-structured developers"
copyright = "2026, " + author
release = sklearn_structured.__version__

extensions = [
    "sphinx.ext.autodoc",
    "sphinx.ext.autosummary",
    "sphinx.ext.napoleon",
    "sphinx.ext.mathjax",
    "sphinx.ext.intersphinx",
    "sphinx_gallery.gen_gallery",
]
autosummary_generate = True
autodoc_default_options = {"members": True, "inherited-members": False}
numpydoc_show_class_members = False
napoleon_numpy_docstring = True
napoleon_google_docstring = False
templates_path = ["_templates"]
exclude_patterns = ["_build", "auto_examples/*.ipynb", "auto_examples/*.py"]
intersphinx_mapping = {}

html_theme = "pydata_sphinx_theme"
html_title = "sklearn-structured"
html_theme_options = {"navigation_with_keys": False}
html_static_path = ["_static"]
html_css_files = ["custom.css"]

sphinx_gallery_conf = {
    "examples_dirs": str(ROOT / "examples"),
    "gallery_dirs": "auto_examples",
    "filename_pattern": r"/plot_",
    "abort_on_example_error": True,
    "only_warn_on_example_error": False,
    "remove_config_comments": True,
    "within_subsection_order": "FileNameSortKey",
    "download_all_examples": False,
}
