"""From raw text: the tokeniser, the whole pipeline, UDPipe beside it, Dask."""
