#!/bin/bash
# The GPU learner on one GPU machine, each step with its own time limit (one failure does not stop the rest):
#   1. tests/learning/test_gpu.py (the gpu config trains on CUDA, its checkpoint plays on the CPU)
#   2. bench_train.py: `gpu` on CUDA, then the same config with device=cpu (a pair, same cores)
#   3. bench_train.py: `douzero` on CUDA, then DouZero's own trainer on the same GPU (a pair)
#   4. a short `gpu` run on CUDA, exported as a playing checkpoint to evaluate on any machine
# Run from the project root, with the figures going to $OUT (default gpu-results/):
#   SECS=40 NA=14 DZS=215 TRAIN=120 bash benchmarks/bench_gpu.sh
# DouZero's trainer needs its source: DZ=DIR (a folder holding the package `douzero`, 1.1.0 on PyPI) and,
# where GitPython is missing, a folder with a stub module `git` on PYTHONPATH (DouZero imports it for its
# logs only). About 10 minutes; docs/training.md ("Training on a GPU") has the figures of one run.
set -u
R=${OUT:-gpu-results}; mkdir -p "$R"; S=${SECS:-40}; NA=${NA:-14}
export PYTHONUNBUFFERED=1 OMP_NUM_THREADS=1 MKL_NUM_THREADS=1 PYTHONPATH=${PYTHONPATH:-}:$PWD
{ nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv; grep -c ^processor /proc/cpuinfo
  grep -m1 "model name" /proc/cpuinfo; python3 -c "import torch; print(torch.__version__, torch.cuda.is_available())"; } > "$R/machine.txt" 2>&1
timeout 150 python3 -m pytest -q -p no:cacheprovider tests/learning/test_gpu.py > "$R/test_gpu.txt" 2>&1; echo "rc $?" >> "$R/test_gpu.txt"
for c in "gpu:num_actors=$NA,eval_every=0" "gpu:num_actors=$NA,eval_every=0,device=cpu" \
         "douzero:num_actors=$NA,eval_every=0,device=cuda"; do
  echo "== $c" >> "$R/ours.txt"
  nvidia-smi dmon -s u -d 5 >> "$R/dmon.txt" 2>&1 & dmon=$!
  timeout $((S+100)) python3 benchmarks/bench_train.py --duration "$S" --configs "$c" >> "$R/ours.txt" 2>&1
  echo "rc $?" >> "$R/ours.txt"; kill $dmon 2>/dev/null
done
if [ -n "${DZ:-}" ]; then  # DouZero's trainer: its learner and its 15 actors on GPU 0, as its README runs it
  save=$(mktemp -d)
  (cd "$DZ" && timeout "${DZS:-215}" python3 -c \
    "import sys; from douzero.dmc import parser, train; train(parser.parse_args(sys.argv[1:]))" \
    --gpu_devices 0 --num_actor_devices 1 --num_actors 15 --training_device 0 --disable_checkpoint \
    --savedir "$save" --xpid bench > "$R/douzero.txt" 2>&1; echo "rc $?" >> "$R/douzero.txt")
  # its rate: frames between the first and the last "After N" line that counts frames
  python3 - "$R/douzero.txt" <<'EOF' | tee -a "$R/douzero.txt"
import re, sys, datetime
pts = [(datetime.datetime.strptime(m.group(1), "%Y-%m-%d %H:%M:%S,%f"), int(m.group(2)))
       for m in re.finditer(r"(\d{4}-\d\d-\d\d \d\d:\d\d:\d\d,\d+)\] After (\d+) ", open(sys.argv[1], errors="replace").read())]
pts = [p for p in pts if p[1] > 0]
if len(pts) >= 2:
    (ta, fa), (tb, fb) = pts[0], pts[-1]
    print(f"DouZero's trainer: {fb - fa} frames in {(tb - ta).total_seconds():.0f} s: {(fb - fa) / (tb - ta).total_seconds():.0f} frames/s")
else:
    print("DouZero's trainer logged fewer than two lines with frames")
EOF
fi
timeout $((${TRAIN:-120} + 80)) python3 train.py --config gpu --run-dir "$R/run" --no-progress --set num_actors="$NA" \
  --set max_seconds="${TRAIN:-120}" --set eval_every=0 --set log_every_frames=1000000 > "$R/train.txt" 2>&1
echo "rc $?" >> "$R/train.txt"
python3 -m agents.dmc.export "$R/run" "$R/gpu-cuda.pt" >> "$R/train.txt" 2>&1
tail -3 "$R/test_gpu.txt" "$R/ours.txt" "$R/train.txt"
