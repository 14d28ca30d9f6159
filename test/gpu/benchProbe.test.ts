/**
 * The sondage half of bench/gpu-probe.sh (bench/gpuProbe.ts) against the fake vLLM: its prompts
 * (the probe asking Qwen's True/False label ids) and its online measurement through the
 * openai-compatible provider. The benchmark itself needs a GPU and vLLM and is not run here.
 */
import { spawn } from 'node:child_process';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { benchPrompts, measureOnline } from '../../bench/gpuProbe.js';
import { FAKE_VLLM, freePort } from '../helpers/gpu.js';

let port: number;
let server: ReturnType<typeof spawn>;
beforeAll(async () => {
  port = await freePort();
  server = spawn(process.execPath, [FAKE_VLLM, 'serve', 'Qwen/Qwen3-8B', '--port', String(port), '--served-model-name', 'Qwen/Qwen3-8B'], { stdio: 'ignore' });
  for (let i = 0; i < 200 && !(await fetch(`http://127.0.0.1:${port}/health`).then((r) => r.ok, () => false)); i++) await new Promise((r) => setTimeout(r, 25));
});
afterAll(() => {
  server.kill('SIGTERM');
});

describe('bench/gpuProbe.ts', () => {
  it('writes generation and probe prompts, and measures both through the provider', async () => {
    const prompts = await benchPrompts('Qwen/Qwen3-8B', 30);
    expect(prompts.filter((p) => p.kind === 'generation')).toHaveLength(30);
    const probe = prompts.find((p) => p.kind === 'probe')!;
    expect(probe.settings).toMatchObject({ max_tokens: 1, candidate_logprobs: { tokens: { True: 2514, ' True': 3007 }, method: 'logprob_token_ids' } });
    await expect(benchPrompts('acme/model', 1)).rejects.toThrow(/no tokenizer table/);

    const pps = await measureOnline(`http://127.0.0.1:${port}/v1`, 'Qwen/Qwen3-8B', prompts, 8);

    expect(pps.generation).toBeGreaterThan(0);
    expect(pps.probe).toBeGreaterThan(0);
    const stats = (await (await fetch(`http://127.0.0.1:${port}/stats`)).json()) as { completions: number; maxInFlight: number };
    expect(stats.completions).toBe(60);
  });
});
