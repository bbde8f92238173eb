import type { BackendType } from '@parcel/watcher';

/**
 * The file watcher's backend, named for the platform. Left to its default, @parcel/watcher first
 * asks whether watchman is installed by `popen("watchman …")` and never reaps that shell: each
 * server kept a defunct `sh` child. Naming the native backend skips the probe (watchman is not
 * used here anyway).
 */
export function watchBackend(platform: NodeJS.Platform = process.platform): { backend?: BackendType } {
  switch (platform) {
    case 'linux':
      return { backend: 'inotify' };
    case 'darwin':
      return { backend: 'fs-events' };
    case 'win32':
      return { backend: 'windows' };
    default:
      return {};
  }
}
