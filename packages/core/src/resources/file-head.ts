import { closeSync, constants, fstatSync, openSync, readSync } from 'node:fs';

/** What reading the start of a path found: a regular file's first bytes (and its whole size), a folder, or neither. */
export type FileHead = { kind: 'file'; bytes: Buffer; size: number } | { kind: 'directory' } | { kind: 'unreadable' };

/**
 * The first `limit` bytes of a regular file. Opened non-blocking, so a FIFO never hangs the read;
 * fstat on the descriptor then refuses anything but a file (devices, sockets, FIFOs).
 */
export function readFileHead(path: string, limit: number): FileHead {
  let fd: number;
  try {
    fd = openSync(path, constants.O_RDONLY | constants.O_NONBLOCK);
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === 'EISDIR' ? { kind: 'directory' } : { kind: 'unreadable' };
  }
  try {
    const info = fstatSync(fd);
    if (info.isDirectory()) return { kind: 'directory' };
    if (!info.isFile()) return { kind: 'unreadable' };
    const wanted = Math.min(info.size, Math.max(limit, 0));
    const buffer = Buffer.allocUnsafe(wanted);
    let filled = 0;
    while (filled < wanted) {
      const read = readSync(fd, buffer, filled, wanted - filled, filled);
      if (read === 0) break;
      filled += read;
    }
    return { kind: 'file', bytes: buffer.subarray(0, filled), size: Math.max(info.size, filled) };
  } catch {
    return { kind: 'unreadable' };
  } finally {
    closeSync(fd);
  }
}
