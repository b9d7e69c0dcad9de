"""The bundle: a versioned folder (or .zip) that is the one contract between collector and renderer."""
