/** Hides the password or token of `https://user:token@host/repo` in logs, errors and stored records. */
export function redactUrl(url: string): string {
  return url.replace(/\/\/[^/@\s]*@/, '//***@');
}
