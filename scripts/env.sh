# Sourced by the other scripts: makes Homebrew's keg-only libarchive visible to pkg-config on macOS.
if [ "$(uname -s)" = Darwin ] && command -v brew >/dev/null 2>&1; then
  PKG_CONFIG_PATH="$(brew --prefix libarchive)/lib/pkgconfig${PKG_CONFIG_PATH:+:$PKG_CONFIG_PATH}"
  export PKG_CONFIG_PATH
fi
