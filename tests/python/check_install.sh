#!/usr/bin/env bash
# `cmake --install build --prefix /usr/local` puts the Python module where that Python finds it:
# installed into a staging directory (DESTDIR), the package must be under the directory the
# interpreter reads for the prefix /usr/local, and import from there alone.
# Usage: bash check_install.sh <build dir> <python> <work dir>
set -uo pipefail
build=$1 python=$2 stage=$3
rm -rf "$stage"
mkdir -p "$stage"
DESTDIR="$stage" cmake --install "$build" --prefix /usr/local > "$stage/install.log" 2>&1 || { cat "$stage/install.log"; exit 1; }
# where Debian's python3 reads packages installed under /usr/local (its default scheme, posix_local)
site=$("$python" -c "import sysconfig; print(sysconfig.get_path('purelib'))")
in_path=$("$python" -c "import sys; print('$site' in sys.path)")
[ "$in_path" = True ] || { echo "the interpreter does not read $site"; exit 1; }
[ -f "$stage$site/yobx/__init__.py" ] || { echo "no yobx package under $stage$site:"; grep -i python "$stage/install.log"; exit 1; }
ls "$stage$site"/yobx/_yobx*.so > /dev/null || { echo "no extension under $stage$site/yobx"; exit 1; }
cd "$stage"
PYTHONPATH="$stage$site" "$python" -c "
import yobx, yobx.onnx, yobx.sym
from onnx import TensorProto, helper
x = helper.make_tensor_value_info('x', TensorProto.FLOAT, ['n', 4])
m = helper.make_model(helper.make_graph([helper.make_node('Relu', ['x'], ['y'])], 'g', [x], [helper.make_tensor_value_info('y', TensorProto.FLOAT, None)]))
assert yobx.__file__.startswith('$stage$site/yobx/'), yobx.__file__
print('installed in', '$site' + ':', yobx.onnx.evaluate_shapes(m, {'n': 3})['y'], yobx.sym.parse('2*(n + 1) - 2'))
" || exit 1
echo "install check ok"
