#!/usr/bin/env bash
# Builds the GPU probe image (batch-images/probe/Dockerfile) for linux/amd64, pushes it to the
# stack's ECR repository and prints its digest, with the deploy command that pins it.
#
#   batch-images/probe/build.sh [TAG]          # TAG defaults to "probe", the tag the stack names by default
#
# Needs: Docker with buildx, the AWS CLI with credentials for the stack's account, Node (to read
# the outputs file), and a stack deployed with -c sondage:gpu=true and --outputs-file (its
# ProbeImageRepository output; SONDAGE_OUTPUTS points at another file than sondage.aws.json).
# Run on an x86_64 machine or with QEMU emulation set up for buildx: the image is large (~10 GB).
set -euo pipefail

tag="${1:-probe}"
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
outputs="${SONDAGE_OUTPUTS:-$root/sondage.aws.json}"

if [[ ! -f "$outputs" ]]; then
  echo "no outputs file at $outputs: deploy with \`npx cdk deploy -c sondage:gpu=true --outputs-file sondage.aws.json\`, or set SONDAGE_OUTPUTS" >&2
  exit 1
fi
repo="$(node -e '
  const out = JSON.parse(require("fs").readFileSync(process.argv[1], "utf8"));
  const uri = Object.values(out).map((o) => o && o.ProbeImageRepository).find(Boolean);
  if (!uri) { console.error(process.argv[1] + ": no ProbeImageRepository output; deploy the stack with -c sondage:gpu=true"); process.exit(1); }
  console.log(uri);
' "$outputs")"
registry="${repo%%/*}"
name="${repo#*/}"
region="$(cut -d. -f4 <<<"$registry")"

aws ecr get-login-password --region "$region" | docker login --username AWS --password-stdin "$registry"
docker buildx build --platform linux/amd64 -f "$root/batch-images/probe/Dockerfile" -t "$repo:$tag" --push "$root"
digest="$(aws ecr describe-images --region "$region" --repository-name "$name" --image-ids imageTag="$tag" --query 'imageDetails[0].imageDigest' --output text)"

echo "pushed $repo:$tag"
echo "digest $digest"
echo "pin it: npx cdk deploy -c sondage:gpu=true -c sondage:gpuImage=$digest --outputs-file sondage.aws.json"
