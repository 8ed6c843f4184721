"""The op benchmark: ktile's ops against torch eager, torch.compile and Triton on a CUDA GPU
(`ktile bench`, benchmarks/ops.py), and the performance gate of the GPU suite (gate.py).

cases.py and bench_*.py: what is timed (shapes, inputs, formulas, bytes moved); timing.py: how;
triton_kernels.py: the Triton alternatives (the package's kernels, ktile/ops/alternatives_triton*.py);
runner.py: checks and
timings per shape; prebuild.py: the ktile kernels built in parallel first; suite.py: a run over
ops and its files; report.py: the summary table; plot.py: PNGs; gate.py: regressions against
recorded figures; cli.py: the command. Nothing here is imported by `import ktile`.
"""
