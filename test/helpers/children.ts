import { spawn as nodeSpawn, type ChildProcess, type SpawnOptions } from 'node:child_process'
import { existsSync } from 'node:fs'

/**
 * Every process a test file starts dies with it, so a file that fails, crashes or times out leaves no
 * `anvil` or `redis-server` running. Linux's setpriv (util-linux) asks the kernel to SIGKILL the child when
 * this process dies, even by SIGKILL (tap's timeout); the exit handler covers a normal or uncaught exit
 * where setpriv is missing. setpriv execs the command, so the pid is the command's own.
 */
const SETPRIV = ['/usr/bin/setpriv', '/bin/setpriv'].find((path) => existsSync(path))
const running = new Set<ChildProcess>()
process.on('exit', () => { for (const child of running) child.kill('SIGKILL') })

export const spawn = ((command: string, args: readonly string[] = [], options: SpawnOptions = {}): ChildProcess => {
  const child = SETPRIV === undefined
    ? nodeSpawn(command, args, options)
    : nodeSpawn(SETPRIV, ['--pdeathsig', 'KILL', '--', command, ...args], options)
  running.add(child)
  child.once('exit', () => running.delete(child))
  return child
}) as typeof nodeSpawn
