"""External data behind small protocols: one folder per kind, each with an offline default."""
