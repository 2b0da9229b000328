/**
 * The bench's side of bench/java/ScaleBenchDriver.java (the Java client on the client scale
 * curves): starting it, and its `WORD {json}` reply lines.
 */
import { LineChild } from '../lib/child.js';

/** How long one command of the driver may take. */
export const JAVA_WAIT_MS = 180_000;

/** Starts the driver (`classpath`: the compiled class and the jars) and waits for its READY. */
export async function startScaleDriver(classpath: string): Promise<LineChild> {
  const d = new LineChild('Java scale driver', 'java', ['-cp', classpath, 'ScaleBenchDriver']);
  try {
    await d.line('READY', 60_000);
  } catch (err) {
    await d.kill();
    throw err;
  }
  return d;
}

/** Sends a command to the Java driver and awaits its reply line. */
export async function ask(d: LineChild, command: string, word: string): Promise<Record<string, unknown>> {
  d.send(command);
  return reply(d, command.split(' ')[0]!, word);
}

/** The driver's `word {json}` line; a failed command answers `word {"error": ...}`. */
export async function reply(d: LineChild, command: string, word: string): Promise<Record<string, unknown>> {
  const line = await d.line(word, JAVA_WAIT_MS);
  const r = JSON.parse(line.text.slice(word.length + 1)) as Record<string, unknown>;
  if (typeof r.error === 'string') throw new Error(`Java scale driver, ${command}: ${r.error}`);
  return r;
}
