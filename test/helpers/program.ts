/**
 * `anvil <args>` in this process, for a run refused before it connects anywhere: the CLI's own program (commander,
 * its flags and their variables, the command's loader) and what cli/anvil.ts prints for the error. A CLI start
 * costs about a second of CPU and adds nothing to a parsing rule; test/cli/config.test.ts runs each way out of
 * the real process (a loader's error, commander's own) once.
 */
import { CommanderError, type Command } from 'commander'
import { createProgram } from '../../cli/program.js'
import { errorLine } from '../../cli/error-line.js'
import { cleanEnv } from './cli.js'

/**
 * `stdout` is what commander printed (help, a version). An action's own prints are not caught: tap writes its
 * stream to this process's stdout meanwhile. The real process's runs in test/cli/config.test.ts check it whole.
 */
export async function refusal (args: string[], env: Record<string, string> = {}): Promise<{ code: number, stdout: string, stderr: string }> {
  const program = createProgram('0.0.0')
  let [stdout, stderr] = ['', '']
  // Settings are copied to each command as it is made: set them on every one, so none exits this process.
  const capture = (command: Command): void => {
    command.exitOverride().configureOutput({ writeOut: (text) => { stdout += text }, writeErr: (text) => { stderr += text } })
    command.commands.forEach(capture)
  }
  capture(program)
  const saved = process.env
  // Commander reads each option's variable from process.env, as the actions do: only what the run gives.
  process.env = cleanEnv(env)
  try {
    await program.parseAsync(args, { from: 'user' })
  } catch (err) {
    if (err instanceof CommanderError) return { code: err.exitCode, stdout, stderr }
    return { code: 1, stdout, stderr: `${stderr}${errorLine(err)}\n` }
  } finally {
    process.env = saved
  }
  throw new Error(`anvil ${args.join(' ')} ran without an error`)
}
