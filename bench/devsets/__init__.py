"""Development sets of our own (LoCoMo file format) for choosing recall signals and floors."""
