#!/bin/sh
# The Java trust store pisbx-tls.so writes (PKCS#12, no password, each
# certificate marked trusted as keytool marks one): a real JVM, pointed
# at it with javax.net.ssl.trustStore, accepts an HTTPS server whose
# certificate the bundle's CA signed, and refuses it without the store.
. "$(dirname "$0")/../lib/common.sh"

PROBE=$PISBX_BUILD/tests/helpers/tlsprobe
[ -x "$PROBE" ] || skip "no $PROBE (make tests-build)"
[ -f "$PISBX_BINDIR/pisbx-tls.so" ] || skip "no pisbx-tls.so (make)"
command -v java >/dev/null 2>&1 || skip "no java (./bootstrap --test installs openjdk)"
command -v openssl >/dev/null 2>&1 || skip "no openssl"

mkdir "$T/bin"
cp "$PROBE" "$PISBX_BINDIR/pisbx-tls.so" "$T/bin/"
cd "$T" || exit 1
openssl req -x509 -newkey ec -pkeyopt ec_paramgen_curve:P-256 -nodes \
    -keyout ca.key -out ca.pem -subj /CN=java-test-ca -days 2 2>/dev/null
openssl req -newkey ec -pkeyopt ec_paramgen_curve:P-256 -nodes \
    -keyout leaf.key -out leaf.csr -subj /CN=127.0.0.1 2>/dev/null
printf 'subjectAltName=IP:127.0.0.1\nextendedKeyUsage=serverAuth\n' >ext
openssl x509 -req -in leaf.csr -CA ca.pem -CAkey ca.key -CAcreateserial \
    -out leaf.pem -days 1 -extfile ext 2>/dev/null
# A bundle as pisbx-run writes one: some roots, then the CA.
openssl req -x509 -newkey ec -pkeyopt ec_paramgen_curve:P-256 -nodes \
    -keyout other.key -out other.pem -subj /CN=other -days 2 2>/dev/null
cat other.pem ca.pem >bundle.pem

out=$("$T/bin/tlsprobe" truststore "$T/bundle.pem" "$T/trust.p12" 2>&1)
check "the trust store is written" test -s "$T/trust.p12"
[ -s "$T/trust.p12" ] || { printf '# %s\n' "$out"; done_testing; }
n=$(keytool -list -keystore "$T/trust.p12" -storetype PKCS12 \
    -storepass '' 2>/dev/null | grep -c trustedCertEntry)
check "keytool lists both certificates as trusted entries ($n)" test "$n" = 2

cat >Probe.java <<'JAVA'
import java.net.URL;
import javax.net.ssl.HttpsURLConnection;
public class Probe {
	public static void main(String[] a) throws Exception {
		HttpsURLConnection c = (HttpsURLConnection) new URL(a[0]).openConnection();
		System.out.println("status " + c.getResponseCode());
	}
}
JAVA
port=$($PY -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])')
spawn openssl s_server -accept "127.0.0.1:$port" -cert leaf.pem \
    -key leaf.key -www -quiet >"$T/server.log" 2>&1
wait_port 127.0.0.1 "$port"

out=$(timeout 120 java -Djavax.net.ssl.trustStore="$T/trust.p12" \
    -Djavax.net.ssl.trustStoreType=PKCS12 Probe.java \
    "https://127.0.0.1:$port/" 2>&1)
if [ "$out" = "status 200" ]; then
	ok "java trusts the server through the store"
else
	not_ok "java with the store: $(printf '%s' "$out" | head -n 3)"
fi
out=$(timeout 120 java Probe.java "https://127.0.0.1:$port/" 2>&1)
check "java without the store refuses the server" sh -c \
    "printf '%s' '$(printf '%s' "$out" | tr -d "'" | head -c 2000)' | grep -q 'PKIX path building failed'"

done_testing
