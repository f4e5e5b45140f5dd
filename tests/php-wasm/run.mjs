// Runs the PHP CLI of one version compiled to WebAssembly, on the host's
// filesystem, with this process's environment and working directory:
//   node run.mjs VERSION [php arguments…]
// Its stdout, stderr and exit code are PHP's. Used by tests/tests/php_versions.rs.
import { PHP } from '@php-wasm/universal';
import { loadNodeRuntime, useHostFilesystem } from '@php-wasm/node';

const [version, ...args] = process.argv.slice(2);
const php = new PHP(await loadNodeRuntime(version));
useHostFilesystem(php);
const r = await php.cli(['php', ...args], { cwd: process.cwd(), env: { ...process.env } });
const [out, err, code] = await Promise.all([r.stdoutText, r.stderrText, r.exitCode]);
process.stdout.write(out);
process.stderr.write(err);
process.exit(code);
