/** Where the console is, from the address the server listens on (`http://127.0.0.1:8080` → `…/ui/`). */
export function consoleUrl(listenUrl: string): string {
  return `${listenUrl.replace(/\/+$/, '')}/ui/`;
}

/**
 * What a server with no user yet says at start: its console asks for a login nobody can pass
 * until the first admin exists. Undefined once a user exists.
 */
export function firstStartHint(listenUrl: string, users: number): string | undefined {
  if (users > 0) return undefined;
  return (
    `no user exists yet, so nobody can log in to the console at ${consoleUrl(listenUrl)}: ` +
    'create the first admin with BI_ADMIN_USER and BI_ADMIN_PASSWORD (at least 8 characters) and start again, ' +
    "or run: echo 'a-long-password' | npx bictl users add admin --admin"
  );
}
