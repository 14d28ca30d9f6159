/**
 * The GPU instance types a model may run on (AWS Batch, one queue per type and capacity): their
 * GPUs, memory and hourly price, from gpuInstances.json. The plan checks a model fits, prices its
 * GPU hours and sizes its job from this one table; the stack deploys queues for a subset of it.
 */
import { z } from 'zod';
import { SondageError } from '../errors.js';
import catalogJson from './gpuInstances.json' with { type: 'json' };

const instanceSchema = z.strictObject({
  gpu: z.string().min(1),
  gpus: z.int().min(1),
  gpu_memory_gib: z.number().positive(),
  vcpus: z.int().min(1),
  memory_gib: z.number().positive(),
  on_demand_per_hour: z.number().positive(),
});

const catalogSchema = z.strictObject({
  version: z.string().regex(/^\d{4}-\d{2}-\d{2}$/),
  region: z.string().min(1),
  verified: z.boolean(),
  note: z.string(),
  spot_fraction: z.number().gt(0).max(1),
  instances: z.record(z.string().regex(/^[a-z0-9]+\.[a-z0-9]+$/), instanceSchema),
});

/** One instance type of the catalog. */
export type GpuInstance = z.output<typeof instanceSchema>;
export type GpuCatalog = z.output<typeof catalogSchema>;

/** Spot (reclaimable, cheaper) or on-demand capacity: one queue each per instance type. */
export type GpuCapacity = 'spot' | 'on-demand';
export const GPU_CAPACITIES: readonly GpuCapacity[] = ['spot', 'on-demand'];

function loadCatalog(raw: unknown): GpuCatalog {
  const parsed = catalogSchema.safeParse(raw);
  // Ships with the code: a bad entry is a programming mistake, caught by the tests.
  if (!parsed.success) throw new SondageError(`lib/gpu/gpuInstances.json is malformed: ${z.prettifyError(parsed.error)}`);
  return parsed.data;
}

/** The bundled catalog, validated once at load. */
export const GPU_CATALOG: GpuCatalog = loadCatalog(catalogJson);

/** Every instance type the catalog knows, sorted. */
export const GPU_INSTANCE_TYPES: readonly [string, ...string[]] = Object.keys(GPU_CATALOG.instances).sort() as [string, ...string[]];

/**
 * An instance type of the catalog.
 * @example gpuInstance('g6e.xlarge').gpu_memory_gib === 48
 * @throws SondageError naming the known types
 */
export function gpuInstance(type: string): GpuInstance {
  const found = Object.hasOwn(GPU_CATALOG.instances, type) ? GPU_CATALOG.instances[type] : undefined;
  if (!found) throw new SondageError(`"${type}" is not a GPU instance type sondage knows; use one of ${GPU_INSTANCE_TYPES.join(', ')}`);
  return found;
}

/** USD per hour of one instance: on-demand, or the catalog's spot_fraction of it (an assumption: Spot prices move). */
export function hourlyPrice(type: string, capacity: GpuCapacity): number {
  const on = gpuInstance(type).on_demand_per_hour;
  return capacity === 'spot' ? on * GPU_CATALOG.spot_fraction : on;
}

/** What a job asks AWS Batch for: its GPUs, and its share of the instance's vCPUs and memory. */
export interface JobResources {
  readonly gpus: number;
  readonly vcpus: number;
  readonly memoryMib: number;
}

/**
 * Memory the ECS agent and the OS keep on every instance: a job asking for all of the instance's
 * memory would never be placed.
 */
const HOST_RESERVED_MIB = 1536;

/**
 * The resources of a job using `gpus` GPUs of an instance: GPUs as asked, vCPUs and memory in
 * proportion (less what the host keeps), so that a job using all GPUs fills the instance and Batch
 * places it on exactly one.
 * @example jobResources('g5.xlarge', 1) // { gpus: 1, vcpus: 4, memoryMib: 14848 }
 */
export function jobResources(type: string, gpus?: number): JobResources {
  const inst = gpuInstance(type);
  const n = gpus ?? inst.gpus;
  if (!Number.isInteger(n) || n < 1 || n > inst.gpus) throw new SondageError(`${type} has ${inst.gpus} GPU(s); a job cannot ask for ${String(n)}`);
  const share = n / inst.gpus;
  return {
    gpus: n,
    vcpus: Math.max(1, Math.floor(inst.vcpus * share)),
    memoryMib: Math.floor((inst.memory_gib * 1024 - HOST_RESERVED_MIB) * share),
  };
}
