/**
 * A small FAR-6 run campaign (test/fixtures/run/small.yaml) whose one model is an OpenAI-compatible
 * server on 127.0.0.1, in a fresh temp folder, with its key in an environment variable: the set-up
 * of the run tests that need a provider speaking the wire format. `close` stops the server, removes
 * the folder and the variable.
 */
import { startWireServer, type WireReply, type WireServer } from '../providers/helpers/wireServer.js';
import { tempDir, writeCampaign, type CampaignDoc } from './campaigns.js';

export const WIRE_KEY_ENV = 'SONDAGE_TEST_KEY';
/** The key the model entry reads: tests assert it goes on the wire and nowhere else. */
export const WIRE_KEY = 'sk-test-local-0000000000000000';

export interface WireCampaign {
  readonly server: WireServer;
  /** The campaign file (its data under `<dir>/data`). */
  readonly file: string;
  readonly dir: string;
  close(): Promise<void>;
}

/**
 * `model`: fields of the model entry besides its id, provider, endpoint and key (price, rpm,
 * timeout_s); `edit`: any other change to the campaign document.
 */
export async function wireCampaign(
  script: readonly WireReply[],
  model: Record<string, unknown>,
  edit: (doc: CampaignDoc) => void = () => {},
): Promise<WireCampaign> {
  const server = await startWireServer(script);
  const tmp = await tempDir('wire-campaign');
  process.env[WIRE_KEY_ENV] = WIRE_KEY;
  const file = await writeCampaign(tmp.dir, 'small.yaml', (doc) => {
    doc.models = [{ id: 'local', provider: 'openai-compatible', model: 'qwen3-8b', base_url: `${server.url}/v1`, api_key_env: WIRE_KEY_ENV, ...model }];
    edit(doc);
  });
  return {
    server,
    file,
    dir: tmp.dir,
    close: async () => {
      await server.close();
      await tmp.cleanup();
      delete process.env[WIRE_KEY_ENV];
    },
  };
}
