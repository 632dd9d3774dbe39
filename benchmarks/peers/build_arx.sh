#!/usr/bin/env bash
# Build ARX's core library and the drivers of this folder; write OUT_DIR/cp.txt, the classpath to pass
# as --arx-cp "$(cat OUT_DIR/cp.txt)".
#
#   benchmarks/peers/build_arx.sh SRC_DIR OUT_DIR
#
# SRC_DIR: a checkout (or `git archive`) of https://github.com/arx-deidentifier/arx. Compiles src/main
# (no GUI) against the jars ARX's build.xml lists as "lib.jars", then ARX's TestAnonymization* JUnit classes
# (src/test, with its junit and hamcrest jars), then every *.java of this folder; writes OUT_DIR/suite, the
# working directory of ArxSuiteCase (ARX's data/ plus stand-ins for the files its source withholds). A jar absent from SRC_DIR (a snapshot may lack the largest) is replaced: pdfbox-app by
# Debian's libpdfbox2-java (apt-get install libpdfbox2-java), hadoop-core by a compile-time stub of the
# one interface ARX's sources reach (org.apache.hadoop.io.Writable, through Mahout); any other is left
# out and named. Needs javac 17.
set -euo pipefail

if [ $# -ne 2 ]; then
    echo "usage: $0 SRC_DIR OUT_DIR" >&2
    exit 2
fi
SRC=$(cd "$1" && pwd)
HERE=$(cd "$(dirname "$0")" && pwd)
for f in "$SRC/build.xml" "$SRC/src/main/org/deidentifier/arx/ARXAnonymizer.java"; do
    [ -f "$f" ] || { echo "$0: $SRC is not an ARX checkout (no $f)" >&2; exit 2; }
done
mkdir -p "$2"
OUT=$(cd "$2" && pwd)
command -v javac > /dev/null || { echo "$0: javac not found (Java 17 needed)" >&2; exit 2; }

# The jar names of build.xml's <fileset id="lib.jars">.
lib_jars() {
    sed -n '/<fileset id="lib.jars"/,/<\/fileset>/p' "$SRC/build.xml" | grep -o '\*\*/[^"]*\.jar' | sed 's|\*\*/||'
}

JARS=()
MISSING=()
while read -r name; do
    found=$(find "$SRC/lib/ant" -name "$name" -size +1k | head -1)
    if [ -n "$found" ]; then JARS+=("$found"); else MISSING+=("$name"); fi
done < <(lib_jars)

STUB_CP=""
for name in "${MISSING[@]}"; do
    case "$name" in
    pdfbox-app-*)
        for deb in /usr/share/java/pdfbox2.jar /usr/share/java/fontbox2.jar; do
            [ -f "$deb" ] || { echo "$0: $name absent and $deb missing: apt-get install libpdfbox2-java" >&2; exit 2; }
            JARS+=("$deb")
        done
        echo "$name absent: Debian's pdfbox2 + fontbox2 instead" ;;
    hadoop-core-*)
        mkdir -p "$OUT/stub-src/org/apache/hadoop/io" "$OUT/stubs"
        cat > "$OUT/stub-src/org/apache/hadoop/io/Writable.java" << 'EOF'
package org.apache.hadoop.io;

/** Compile-time stand-in for Hadoop's interface (Mahout's classifiers implement it); not on the run classpath. */
public interface Writable {
    void write(java.io.DataOutput out) throws java.io.IOException;

    void readFields(java.io.DataInput in) throws java.io.IOException;
}
EOF
        javac -d "$OUT/stubs" "$OUT/stub-src/org/apache/hadoop/io/Writable.java"
        STUB_CP=":$OUT/stubs"
        echo "$name absent: a compile-time stub of org.apache.hadoop.io.Writable instead" ;;
    *)
        echo "$name absent: left out" ;;
    esac
done

LIB_CP=$(IFS=:; echo "${JARS[*]}")
rm -rf "$OUT/classes" "$OUT/driver"
mkdir -p "$OUT/classes" "$OUT/driver"
find "$SRC/src/main" -name '*.java' > "$OUT/sources.txt"
echo "compiling $(wc -l < "$OUT/sources.txt") ARX sources"
if ! javac -nowarn -encoding UTF-8 -d "$OUT/classes" -cp "$LIB_CP$STUB_CP" @"$OUT/sources.txt" > "$OUT/javac.log" 2>&1; then
    grep -v '^Note:' "$OUT/javac.log" >&2
    echo "$0: ARX did not compile (above; all of it in $OUT/javac.log)" >&2
    exit 1
fi

# The resources build.xml copies beside the classes (risk model tables, certificate images).
for dir in risk/resources/us certificate/resources; do
    (cd "$SRC/src/main/org/deidentifier/arx/$dir" && find . -type f ! -name '*.java' ! -name '*.txt' \
        -exec install -D -m 644 {} "$OUT/classes/org/deidentifier/arx/$dir/{}" \;)
done

# ARX's JUnit anonymization tests (ArxSuiteCase runs their configurations), with the jars of build.xml's "test.jars".
TEST_CP=""
for name in junit-4.11.jar hamcrest-core-1.3.jar; do
    found=$(find "$SRC/lib/ant" -name "$name" -size +1k | head -1)
    [ -n "$found" ] || { echo "$0: $name (ARX's test jars) not in $SRC/lib/ant" >&2; exit 2; }
    TEST_CP="$TEST_CP:$found"
done
TESTS="$SRC/src/test/org/deidentifier/arx/test"
rm -rf "$OUT/test"
mkdir -p "$OUT/test"
echo "compiling $(ls "$TESTS"/TestAnonymization*.java | wc -l) of ARX's TestAnonymization* test classes"
if ! javac -nowarn -encoding UTF-8 -d "$OUT/test" -cp "$OUT/classes:$LIB_CP$TEST_CP" -sourcepath "$SRC/src/test" \
    "$TESTS"/TestAnonymization*.java > "$OUT/javac-test.log" 2>&1; then
    grep -v '^Note:' "$OUT/javac-test.log" >&2
    echo "$0: ARX's tests did not compile (above; all of it in $OUT/javac-test.log)" >&2
    exit 1
fi

# The working directory of ArxSuiteCase: data/ holds ARX's data files and, for every ./data/ file the test
# classes name that the source lacks (ARX withholds some datasets), a one-row stand-in, read only while the
# test classes list their cases (ArxSuiteCase runs the cases on adult.csv alone).
rm -rf "$OUT/suite"
mkdir -p "$OUT/suite/data"
ln -s "$SRC"/data/* "$OUT/suite/data/"
stubs=0
while read -r file; do
    [ -e "$OUT/suite/$file" ] && continue
    case "$file" in
    *_hierarchy_*) printf 'stub;*\n' > "$OUT/suite/$file" ;;
    *) printf 'stub\nstub\n' > "$OUT/suite/$file" ;;
    esac
    stubs=$((stubs + 1))
done < <(grep -oh '"\./data/[^"]*"' "$TESTS"/TestAnonymization*.java | tr -d '"' | sort -u)
echo "wrote $OUT/suite (ArxSuiteCase's working directory; $stubs stand-ins for data files the source lacks)"

javac -encoding UTF-8 -d "$OUT/driver" -cp "$OUT/classes:$OUT/test:$LIB_CP$TEST_CP" "$HERE"/*.java
echo "$OUT/classes:$OUT/driver:$OUT/test:$LIB_CP$TEST_CP" > "$OUT/cp.txt"
echo "wrote $OUT/cp.txt (drivers: $(cd "$OUT/driver" && ls -- *.class | grep -v '\$' | sed 's/\.class$//' | tr '\n' ' '))"
