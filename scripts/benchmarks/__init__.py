"""fsim's benchmarks (scripts/bench.py): config (the knobs, the tools
checked first), measure (running and timing), inputs (the generated and
cut trees), main and alone (the sections: their data), render and
performance (the markdown from the data), texts (its text)."""
