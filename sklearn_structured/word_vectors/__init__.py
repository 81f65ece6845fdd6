"""Word vectors and word clusters learned from unannotated text, for the taggers and
the parser."""

from ._ppmi import (PPMIWordVectors, cluster_words, clusters_of_file, load_word_vectors,
                    vectors_of_file)

__all__ = ["PPMIWordVectors", "cluster_words", "clusters_of_file", "load_word_vectors",
           "vectors_of_file"]
