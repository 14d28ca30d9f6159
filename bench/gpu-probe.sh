#!/usr/bin/env bash
# Prompts per second of sondage's GPU path against vLLM's own offline throughput, for one model and
# the same prompts. Numbers, not pass/fail.
#
#   bench/gpu-probe.sh MODEL [N]        e.g. bench/gpu-probe.sh Qwen/Qwen3-8B 2000
#
# Runs on a machine with an NVIDIA GPU, vLLM installed (`vllm` and its Python package), Node 20 and
# this repository's node_modules; the model's weights on the Hugging Face Hub or in its cache
# (HF_TOKEN for gated models). MODEL must be a Qwen, Llama 3 or Gemma 3 model: the probe's label
# ids come from the P(True) battery's tokenizer table.
#
# 1. N generation prompts and N probe prompts (bench/gpuProbe.ts prompts): the P(True) demo's
#    multiple-choice questions in six languages; generation asks up to 256 tokens, greedy; the probe
#    asks one token with the first-token logprobs of the True/False label ids.
# 2. `vllm serve` as the GPU job starts it (loopback, --generation-config vllm, --max-num-seqs
#    IN_FLIGHT), then sondage's provider with IN_FLIGHT calls in flight (bench/gpuProbe.ts online):
#    prompts per second of each kind.
# 3. The server stopped, vLLM's offline engine (LLM.chat) on the same prompts and settings.
# 4. The ratio online / offline, and the gpu.prompts_per_second to put in the campaign file.
#
# Environment: TP (tensor-parallel size, default 1), PORT (default 8000), IN_FLIGHT (default 256),
# MAX_MODEL_LEN (default: the model's), STARTUP_TIMEOUT (seconds, default 1200).
set -euo pipefail

if [[ $# -lt 1 ]]; then
  sed -n '2,22p' "$0" >&2
  exit 2
fi
model="$1"
n="${2:-1000}"
tp="${TP:-1}"
port="${PORT:-8000}"
in_flight="${IN_FLIGHT:-256}"
max_model_len="${MAX_MODEL_LEN:-0}"
startup_timeout="${STARTUP_TIMEOUT:-1200}"
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
work="$(mktemp -d)"
server=""

cleanup() {
  if [[ -n "$server" ]] && kill -0 "$server" 2>/dev/null; then
    kill "$server" 2>/dev/null || true
    wait "$server" 2>/dev/null || true
  fi
  rm -rf "$work"
}
trap cleanup EXIT

for tool in vllm python3 node curl nvidia-smi; do
  command -v "$tool" >/dev/null || { echo "gpu-probe: $tool not found; this benchmark needs a GPU machine with vLLM" >&2; exit 2; }
done
nvidia-smi --query-gpu=name,memory.total,driver_version --format=csv,noheader

cd "$root"
node --import tsx bench/gpuProbe.ts prompts --model "$model" --n "$n" --out "$work/prompts.jsonl"

extra=()
if [[ "$max_model_len" != "0" ]]; then extra+=(--max-model-len "$max_model_len"); fi
echo "starting vllm serve $model (log: $work/vllm.log)" >&2
vllm serve "$model" --host 127.0.0.1 --port "$port" --served-model-name "$model" \
  --tensor-parallel-size "$tp" --generation-config vllm --max-num-seqs "$in_flight" "${extra[@]}" \
  >"$work/vllm.log" 2>&1 &
server=$!
deadline=$((SECONDS + startup_timeout))
until curl -sf "http://127.0.0.1:$port/health" >/dev/null; do
  if ! kill -0 "$server" 2>/dev/null; then tail -n 30 "$work/vllm.log" >&2; echo "gpu-probe: vllm serve exited" >&2; exit 1; fi
  if ((SECONDS > deadline)); then echo "gpu-probe: vllm serve not healthy after ${startup_timeout}s" >&2; exit 1; fi
  sleep 2
done

online="$(node --import tsx bench/gpuProbe.ts online --model "$model" --base-url "http://127.0.0.1:$port/v1" --prompts "$work/prompts.jsonl" --in-flight "$in_flight")"
kill "$server"
wait "$server" 2>/dev/null || true
server=""

cat >"$work/offline.py" <<'PY'
"""vLLM's offline engine on the prompts bench/gpuProbe.ts wrote: prompts per second of each kind."""
import json
import sys
import time

from vllm import LLM, SamplingParams

model, prompts_file, tp, max_model_len = sys.argv[1], sys.argv[2], int(sys.argv[3]), int(sys.argv[4])
prompts = [json.loads(line) for line in open(prompts_file, encoding="utf-8") if line.strip()]
kwargs = {"max_model_len": max_model_len} if max_model_len > 0 else {}
llm = LLM(model=model, tensor_parallel_size=tp, generation_config="vllm", **kwargs)


def params(settings):
    kw = {"max_tokens": settings["max_tokens"], "temperature": settings.get("temperature", 0)}
    candidates = settings.get("candidate_logprobs")
    if candidates:
        ids = sorted(set(candidates["tokens"].values()))
        try:
            return SamplingParams(**kw, logprobs=len(ids), logprob_token_ids=ids)
        except TypeError:
            # A vLLM without logprob_token_ids: the top-20 logprobs, comparable work for one token.
            print("offline: this vLLM has no logprob_token_ids; timing top-20 logprobs instead", file=sys.stderr)
            return SamplingParams(**kw, logprobs=20)
    return SamplingParams(**kw)


out = {}
for kind in ("generation", "probe"):
    these = [p for p in prompts if p["kind"] == kind]
    conversations = [p["messages"] for p in these]
    sampling = [params(p["settings"]) for p in these]
    llm.chat(conversations[:8], sampling[:8], use_tqdm=False)  # warm-up (CUDA graphs, caches)
    start = time.perf_counter()
    llm.chat(conversations, sampling, use_tqdm=False)
    out[kind] = len(these) / (time.perf_counter() - start)
print(json.dumps(out))
PY
offline="$(python3 "$work/offline.py" "$model" "$work/prompts.jsonl" "$tp" "$max_model_len" | tail -n 1)"

# shellcheck disable=SC2016 # JavaScript template literals, not shell expansions
node -e '
  const [online, offline, model] = [JSON.parse(process.argv[1]), JSON.parse(process.argv[2]), process.argv[3]];
  for (const kind of ["generation", "probe"]) {
    const r = online[kind] / offline[kind];
    console.log(`${kind.padEnd(10)}  sondage ${online[kind].toFixed(2)} prompts/s   vLLM offline ${offline[kind].toFixed(2)} prompts/s   ratio ${r.toFixed(2)}`);
  }
  console.log(`\nfor ${model} on this GPU, in the campaign file (per phase: generate asks 256 tokens, verify one):`);
  console.log(`  gpu: { prompts_per_second: { generate: ${online.generation.toFixed(2)}, verify: ${online.probe.toFixed(2)} } }`);
' "$online" "$offline" "$model"
