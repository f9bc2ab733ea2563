"""fsim's benchmarks (scripts/bench.py): config (the knobs, the tools
checked first), measure (running and timing), inputs (the generated and
cut trees), main and alone (the sections: their data), outofcore (make
report in a memory cgroup: cgroup finds and makes the group, proc
measures one process and wraps each stage), render and performance (the
markdown from the data), texts (its text). test_cgroup.py: the tests of
cgroup, proc and the out-of-core section's text."""
