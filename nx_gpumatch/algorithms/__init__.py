"""Per-problem front ends: validate, convert, pick the engine, convert back."""
