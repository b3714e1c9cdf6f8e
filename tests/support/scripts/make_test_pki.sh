#!/bin/sh
# Makes a CA and node certificates for ferry's TLS links with the `openssl`
# command (Debian package openssl), EC P-256 keys:
#
#   make_test_pki.sh DIR [OPTION | NAME]...
#
# For each NAME: DIR/NAME.pem (certificate, subject CN=NAME and
# subjectAltName DNS:NAME, usable as TLS server and client) and DIR/NAME.key,
# signed by the current CA. Options apply to the names after them:
#   --ca CA             sign with CA (made on first use: DIR/CA.pem, CA.key);
#                       the first CA is "ca"
#   --dates START END   validity period, e.g. 20200101000000Z 20200102000000Z
#                       (default: from now for 365 days)
#   --days N            valid from now for N days
#   --passphrase TEXT   encrypt the keys that follow with TEXT (AES-256)
#   --plain-key         stop encrypting keys
#
# A node uses DIR/NAME.pem, DIR/NAME.key and the CA's DIR/CA.pem as its
# ferry.tls.certificate, ferry.tls.key and ferry.tls.ca-file. Keep CA.key
# elsewhere in production.
set -eu
[ $# -ge 1 ] || { echo "usage: $0 DIR [OPTION | NAME]..." >&2; exit 2; }
dir=$1
shift
mkdir -p "$dir"
cd "$dir"
ca=ca
dates="-days 365"
passphrase=

make_ca() {
  [ -f "$1.pem" ] && return 0
  openssl req -x509 -newkey ec -pkeyopt ec_paramgen_curve:P-256 -nodes \
    -keyout "$1.key" -out "$1.pem" -days 3650 -subj "/CN=$1" \
    -addext basicConstraints=critical,CA:TRUE \
    -addext keyUsage=critical,keyCertSign,cRLSign 2>/dev/null
  mkdir -p "$1.db"
  : > "$1.db/index.txt"
  echo 01 > "$1.db/serial"
  cat > "$1.cnf" <<CNF
[ca]
default_ca = signing
[signing]
dir = $1.db
database = \$dir/index.txt
serial = \$dir/serial
new_certs_dir = \$dir
certificate = $1.pem
private_key = $1.key
default_md = sha256
policy = names
unique_subject = no
copy_extensions = copy
[names]
commonName = supplied
[node]
basicConstraints = CA:FALSE
keyUsage = critical,digitalSignature,keyEncipherment
extendedKeyUsage = serverAuth,clientAuth
CNF
}

make_node() {
  make_ca "$ca"
  openssl req -newkey ec -pkeyopt ec_paramgen_curve:P-256 -nodes \
    -keyout "$1.key" -out "$1.csr" -subj "/CN=$1" \
    -addext "subjectAltName=DNS:$1" 2>/dev/null
  # shellcheck disable=SC2086 # $dates holds two or three words
  openssl ca -batch -config "$ca.cnf" -extensions node $dates -in "$1.csr" \
    -out "$1.pem" -notext 2>/dev/null
  rm -f "$1.csr"
  if [ -n "$passphrase" ]; then
    openssl pkey -in "$1.key" -aes256 -passout "pass:$passphrase" \
      -out "$1.key.tmp"
    mv "$1.key.tmp" "$1.key"
  fi
  chmod 600 "$1.key"
}

while [ $# -gt 0 ]; do
  case $1 in
    --ca) ca=$2; shift 2 ;;
    --dates) dates="-startdate $2 -enddate $3"; shift 3 ;;
    --days) dates="-days $2"; shift 2 ;;
    --passphrase) passphrase=$2; shift 2 ;;
    --plain-key) passphrase=; shift ;;
    *) make_node "$1"; shift ;;
  esac
done
make_ca "$ca"
