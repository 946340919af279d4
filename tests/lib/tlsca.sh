# A test CA and leaf certificates with the openssl CLI, for the TLS
# scenarios (tests/lib/tlsserver.py serves the leaf).  Source after
# common.sh:
#   . "$PISBX_TOP/tests/lib/tlsca.sh"
# Gives: tlsca_make DIR (DIR/ca.pem, DIR/ca.key: a P-256 CA) and
# tlsca_leaf DIR NAME [NAME...] (DIR/NAME.pem, DIR/NAME.key: a leaf for
# every NAME and for 127.0.0.1, signed by DIR's CA).  Keys are P-256:
# milliseconds to make (docs: PLATFORM.md, "TLS in tests").

# tlsca_make DIR [SUBJECT]: DIR/ca.pem and DIR/ca.key.
tlsca_make() {
	mkdir -p "$1"
	openssl req -x509 -newkey ec -pkeyopt ec_paramgen_curve:P-256 -nodes \
	    -keyout "$1/ca.key" -out "$1/ca.pem" -days 2 \
	    -subj "/CN=${2:-pisbx test CA}" \
	    -addext "basicConstraints=critical,CA:TRUE" \
	    -addext "keyUsage=critical,keyCertSign,cRLSign" \
	    -addext "subjectKeyIdentifier=hash" 2>"$1/openssl.err" || {
		echo "tlsca_make: $(cat "$1/openssl.err")" >&2
		return 1
	}
	chmod 644 "$1/ca.pem"
}

# tlsca_leaf DIR NAME [NAME...]: DIR/NAME.pem (the leaf, then the CA) and
# DIR/NAME.key, for the first NAME; every NAME and 127.0.0.1 in its
# subjectAltName.
tlsca_leaf() {
	_d=$1; shift
	_n=$1
	_san="IP:127.0.0.1"
	for _h in "$@"; do _san="DNS:$_h,$_san"; done
	printf '%s\n' "basicConstraints=critical,CA:FALSE" \
	    "keyUsage=critical,digitalSignature" \
	    "extendedKeyUsage=serverAuth" \
	    "subjectKeyIdentifier=hash" \
	    "authorityKeyIdentifier=keyid" \
	    "subjectAltName=$_san" >"$_d/$_n.ext"
	openssl req -new -newkey ec -pkeyopt ec_paramgen_curve:P-256 -nodes \
	    -keyout "$_d/$_n.key" -out "$_d/$_n.csr" -subj "/CN=$_n" \
	    2>"$_d/openssl.err" &&
	openssl x509 -req -in "$_d/$_n.csr" -CA "$_d/ca.pem" \
	    -CAkey "$_d/ca.key" -CAcreateserial -days 2 -sha256 \
	    -extfile "$_d/$_n.ext" -out "$_d/$_n.crt" 2>>"$_d/openssl.err" || {
		echo "tlsca_leaf $_n: $(cat "$_d/openssl.err")" >&2
		return 1
	}
	cat "$_d/$_n.crt" "$_d/ca.pem" >"$_d/$_n.pem"
	chmod 644 "$_d/$_n.pem" "$_d/$_n.key"
}

# tls_start MODE NAME CERTNAME [ARGS...]: tlsserver.py MODE on 127.0.0.1
# with $TLSCA/CERTNAME's leaf, requests logged to $T/NAME.reqs; sets
# SRV_PORT and SRV_PID.  CERTNAME "-" serves plain HTTP.
tls_start() {
	_mode=$1 _name=$2 _cn=$3
	shift 3
	rm -f "$T/$_name.port"
	if [ "$_cn" = - ]; then
		set -- --plain "$@"
	else
		set -- --cert "$TLSCA/$_cn.pem" --key "$TLSCA/$_cn.key" "$@"
	fi
	spawn "$PY" "$PISBX_TOP/tests/lib/tlsserver.py" "$_mode" \
	    --port-file "$T/$_name.port" --log "$T/$_name.reqs" "$@" \
	    >"$T/$_name.out" 2>"$T/$_name.err"
	SRV_PID=$LAST_PID
	if ! wait_file "$T/$_name.port" 200; then
		not_ok "server $_name ($_mode) did not start: $(cat "$T/$_name.err")"
		exit 1
	fi
	SRV_PORT=$(cat "$T/$_name.port")
	: >>"$T/$_name.reqs"
	chmod 644 "$T/$_name.reqs"
}
