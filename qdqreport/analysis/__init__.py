"""Analysis of a bundle's data for the rules: NumPy and the standard library only."""
