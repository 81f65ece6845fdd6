"""Rank-space PCFG and HMM: training, epoch time, kernel speed."""
