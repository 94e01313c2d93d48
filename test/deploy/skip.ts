// The deploy suite needs podman, the image, helm and the node agents; missing pieces are a
// visible skip locally and a failure in CI (CI=true), like every real-component suite.
import { execFileSync } from 'node:child_process';
import { motoSkip } from '../support/moto.ts';
import { testenvBinaries } from '../support/testenv-binaries.ts';
import { nodeAgentBinaries } from '../support/kwok-cluster.ts';
import { podmanEnv } from './pod.ts';

export const IMAGE = 'cloud-route-controller:0.1.0';

function missingImage(): string | undefined {
  try {
    execFileSync('podman', ['image', 'exists', IMAGE], { env: podmanEnv(), stdio: 'ignore' });
  } catch {
    return `image ${IMAGE} missing: run \`bash scripts/image.sh build\``;
  }
  return undefined;
}

function missing(helm: string | undefined, needMoto: boolean): string | undefined {
  if (testenvBinaries() === undefined || nodeAgentBinaries() === undefined)
    return 'kube-apiserver/etcd/kube-controller-manager/kwok missing: run `bash scripts/testenv.sh build`';
  if (helm === undefined) return 'helm missing: run `bash scripts/monitoring-tools.sh build`';
  if (needMoto && motoSkip().skip !== false) return String(motoSkip().skip);
  return missingImage();
}

/** The image alone (podman and a built image), for tests of the image itself. */
export function imageSkip(): string | false {
  return skipOrFail(missingImage());
}

export function deploySkip(helm: string | undefined, needMoto = true): string | false {
  return skipOrFail(missing(helm, needMoto));
}

function skipOrFail(reason: string | undefined): string | false {
  if (reason === undefined) return false;
  if (process.env.CI === 'true') throw new Error(`${reason} (CI=true: a missing piece is a failure)`);
  return reason;
}
