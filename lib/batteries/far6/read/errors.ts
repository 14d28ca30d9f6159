import { SondageError } from '../../../api/battery.js';

/**
 * A reading map (or a reader's configuration) cannot be read by: two surface forms that fold to the
 * same key but stand for opposite propositions, a kind that needs tokens but has none, a sample rate
 * outside [0, 1]. These are design or programming mistakes, so they throw; an unreadable reply never
 * does (it reads as `invalid`).
 */
export class ReadingMapError extends SondageError {
  constructor(message: string, options?: ErrorOptions) {
    super(message, options);
    this.name = 'ReadingMapError';
  }
}
