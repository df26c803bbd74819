/** A turn's durations and its footer's figures, as words. */
import type { TurnStats } from './types';

export function formatSeconds(seconds: number): string {
  if (seconds < 60) {
    return `${seconds.toFixed(1)} s`;
  }
  const total = Math.round(seconds);
  return `${Math.floor(total / 60)} min ${String(total % 60).padStart(2, '0')} s`;
}

/** The footer's parts, worded as `render_text.format_stats` words them. */
export function formatStats(stats: TurnStats): string[] {
  const parts: string[] = [];
  const int = (n: number) => n.toLocaleString('en-US');
  if (stats.input_tokens !== undefined || stats.output_tokens !== undefined) {
    const tokensIn = stats.input_tokens ?? 0;
    const tokensOut = stats.output_tokens ?? 0;
    parts.push(tokensIn || tokensOut || !stats.llm_calls ? `${int(tokensIn)} in / ${int(tokensOut)} out tokens` : 'tokens not reported');
  }
  if (stats.llm_calls !== undefined) {
    parts.push(`${stats.llm_calls} model call${stats.llm_calls === 1 ? '' : 's'}`);
  }
  if (stats.elapsed !== undefined) {
    parts.push(formatSeconds(stats.elapsed));
  }
  return parts;
}
