#!/usr/bin/env bash
# Makes the credentials of one troupe deployment with the openssl command line: a deployment CA
# and, for each NAME (a host name or address, or any label such as "run"), a folder DIR/NAME with
#   ca.pem    the deployment CA's certificate (what a peer's certificate must be signed by)
#   cert.pem  this process's certificate, signed by the deployment CA (CN and subjectAltName NAME)
#   key.pem   its private key (mode 600, no passphrase)
# Give each process its own folder: `troupe node --credentials DIR/NAME`, and for the run
# `deployment { credentials_dir: "DIR/NAME" }` in its config (docs/deploy.md).
#
#   scripts/make-deployment-credentials.sh DIR [NAME...]     (no NAME: run and localhost)
#
# The CA's key stays in DIR/ca/ca.key: keep it off the hosts. Run the script again with the same
# DIR to add processes signed by the same CA; an existing NAME folder is never overwritten.
set -euo pipefail

if [ $# -lt 1 ] || [ "${1:-}" = "-h" ] || [ "${1:-}" = "--help" ]; then
  echo "usage: $0 DIR [NAME...]" >&2
  exit 2
fi
dir=$1
shift
names=("$@")
if [ ${#names[@]} -eq 0 ]; then names=(run localhost); fi
command -v openssl >/dev/null || { echo "$0: the openssl command is needed" >&2; exit 2; }

for name in "${names[@]}"; do
  if ! [[ $name =~ ^[A-Za-z0-9][A-Za-z0-9._:-]*$ ]]; then
    echo "$0: NAME '$name': use letters, digits, '.', '-', '_' or ':'" >&2
    exit 2
  fi
  if [ "$name" = ca ]; then echo "$0: NAME 'ca' is the CA's own folder" >&2; exit 2; fi
  if [ -e "$dir/$name" ]; then echo "$0: $dir/$name exists; not overwritten" >&2; exit 2; fi
done

umask 077
ec_key=(-newkey ec -pkeyopt ec_paramgen_curve:prime256v1 -nodes)
if [ ! -f "$dir/ca/ca.key" ]; then
  mkdir -p "$dir/ca"
  openssl req -x509 "${ec_key[@]}" -keyout "$dir/ca/ca.key" -out "$dir/ca/ca.pem" -days 3650 \
    -subj "/CN=troupe deployment CA $(date -u +%Y%m%dT%H%M%SZ)" \
    -addext "basicConstraints=critical,CA:TRUE" -addext "keyUsage=critical,keyCertSign,cRLSign" \
    2>/dev/null
  chmod 644 "$dir/ca/ca.pem"
  echo "deployment CA: $dir/ca/ca.pem (its key $dir/ca/ca.key stays off the hosts)"
fi

for name in "${names[@]}"; do
  out="$dir/$name"
  mkdir -p "$out"
  # An address gets an IP subjectAltName, anything else a DNS one (informational: peers are
  # accepted by the CA's signature, not by name).
  if [[ $name =~ ^[0-9.]+$ || $name == *:* ]]; then san="IP:$name"; else san="DNS:$name"; fi
  ext=$(mktemp)
  printf '%s\n' "basicConstraints=critical,CA:FALSE" "keyUsage=critical,digitalSignature" \
    "extendedKeyUsage=serverAuth,clientAuth" "subjectAltName=$san" >"$ext"
  openssl req "${ec_key[@]}" -keyout "$out/key.pem" -out "$out/request.csr" -subj "/CN=$name" \
    2>/dev/null
  openssl x509 -req -in "$out/request.csr" -CA "$dir/ca/ca.pem" -CAkey "$dir/ca/ca.key" \
    -CAcreateserial -out "$out/cert.pem" -days 825 -extfile "$ext" 2>/dev/null
  rm -f "$ext" "$out/request.csr"
  cp "$dir/ca/ca.pem" "$out/ca.pem"
  chmod 644 "$out/cert.pem" "$out/ca.pem"
  chmod 600 "$out/key.pem"
  chmod 755 "$out"
  echo "$name: $out (ca.pem, cert.pem, key.pem)"
done
