"""LowRankTensorParser: accuracy over treebanks and seeds, threads, hill climbing."""
