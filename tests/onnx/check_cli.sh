#!/usr/bin/env bash
# yobx-onnx-shapes from the outside: its summary, its report, its errors (one line, exit
# status 1, no OUT.onnx). Usage: bash check_cli.sh <yobx-onnx-shapes> <work dir>
set -uo pipefail
tool=$1
dir=$2
rm -rf "$dir"
mkdir -p "$dir"
/usr/bin/python3 "$(dirname "$0")/make_cli_models.py" "$dir" > /dev/null || { echo "cannot make the models"; exit 1; }
failed=0
check() {  # name, expected, actual
    if [ "$2" == "$3" ]; then echo "ok: $1"; else echo "FAILED: $1"; echo "  expected: $2"; echo "  got:      $3"; failed=1; fi
}
usage="usage: yobx-onnx-shapes IN.onnx OUT.onnx [--report FILE] [--strict] [--hint NAME=VALUE]... [--op-profiles FILE]
                        [--memory] [--at NAME=VALUE]... [--min NAME=VALUE]... [--plot NAME=LO:HI FILE.svg]
       yobx-onnx-shapes --list-operators"
# fails: a model that cannot be read or inferred: stderr is exactly the one expected line,
# exit status 1, no output file
fails() {  # name, expected error, args...
    local name=$1 expected=$2
    shift 2
    rm -f "$dir/out.onnx"
    local err rc
    err=$("$tool" "$@" 2>&1 > /dev/null)
    rc=$?
    check "$name: exit status" 1 "$rc"
    check "$name: message" "$expected" "$err"
    check "$name: no output file" "absent" "$([ -e "$dir/out.onnx" ] && echo present || echo absent)"
}
# fails_usage: a mistake on the command line: the line, then the usage
fails_usage() {  # name, expected error, args...
    local name=$1 expected=$2
    shift 2
    fails "$name" "$expected
$usage" "$@"
}

out=$("$tool" "$dir/conv.onnx" "$dir/out.onnx" --report "$dir/conv.json")
check "conv: summary" "yobx-onnx-shapes: 2 values, 8 dims: 2 constant, 6 symbolic, 0 fresh, 0 from the model, 0 unknown rank; 0 nodes of operators not covered; " "$(sed 's/[0-9.]* s$//' <<< "$out")"
check "conv: dims written" "c: batch,8,(height + 1)//2,(width + 1)//2 y: batch,8,(height + 1)//4,(width + 1)//4" \
    "$(/usr/bin/python3 -c "
import onnx
m = onnx.load('$dir/out.onnx')
print(' '.join(v.name + ': ' + ','.join(d.dim_param or str(d.dim_value) for d in v.type.tensor_type.shape.dim) for v in list(m.graph.value_info) + list(m.graph.output)))")"
check "conv: report" "2 8 2 6" "$(/usr/bin/python3 -c "
import json
r = json.load(open('$dir/conv.json'))
print(r['values'], r['dims'], r['constant'], r['symbolic'])")"

out=$("$tool" "$dir/broadcast.onnx" "$dir/out.onnx" --report "$dir/b.json")
check "broadcast: ONNX's fresh symbol" "s0 'add' (Add)" "$(/usr/bin/python3 -c "
import json
r = json.load(open('$dir/b.json'))
print(r['fresh_symbols'][0]['symbol'], r['fresh_symbols'][0]['node'])")"
"$tool" "$dir/broadcast.onnx" "$dir/out.onnx" --hint n=4 --hint m=1 --report "$dir/h.json" > /dev/null
check "broadcast with hints: the assumption" "'add' (Add) Eq(m, n) False 1 n" "$(/usr/bin/python3 -c "
import json, onnx
r = json.load(open('$dir/h.json'))
a = r['assumptions'][0]
m = onnx.load('$dir/out.onnx')
print(a['node'], a['question'], a['answer'], a['count'], m.graph.output[0].type.tensor_type.shape.dim[0].dim_param)")"
fails "strict" "yobx-onnx-shapes: node 'add' (Add): strict mode cannot decide Eq(m, n) from the model's dims; without strict mode ONNX's rule gives a fresh symbol, and hints (--hint NAME=VALUE) make a draft walk that records the assumption" \
    "$dir/broadcast.onnx" "$dir/out.onnx" --strict

"$tool" "$dir/names.onnx" "$dir/out.onnx" --report "$dir/n.json" > /dev/null
check "names: the mapping and the expression" "batch size -> batch_size; y: batch_size,past_sequence_length + 1" "$(/usr/bin/python3 -c "
import json, onnx
r = json.load(open('$dir/n.json'))
m = onnx.load('$dir/out.onnx')
print('; '.join(x['dim_param'] + ' -> ' + x['symbol'] for x in r['name_mapping']) + '; y: ' + ','.join(d.dim_param for d in m.graph.output[0].type.tensor_type.shape.dim))")"

"$tool" "$dir/custom.onnx" "$dir/out.onnx" --op-profiles "$dir/profiles.json" > /dev/null
check "custom op with a profile" "batch,height*width,6" "$(/usr/bin/python3 -c "
import onnx
m = onnx.load('$dir/out.onnx')
print(','.join(d.dim_param or str(d.dim_value) for d in m.graph.output[0].type.tensor_type.shape.dim))")"
"$tool" "$dir/custom.onnx" "$dir/out.onnx" --report "$dir/c.json" > /dev/null
check "custom op without a profile: named in the report" "mydomain MyOp mydomain.MyOp 1" "$(/usr/bin/python3 -c "
import json
r = json.load(open('$dir/c.json'))
x = r['not_covered'][0]
print(x['domain'], x['op_type'], x['op'], x['count'])")"

"$tool" "$dir/external.onnx" "$dir/out.onnx" > /dev/null
check "external data: a small integer tensor is read from beside the model" "batch,24" "$(/usr/bin/python3 -c "
import onnx
m = onnx.load('$dir/out.onnx', load_external_data=False)
print(','.join(d.dim_param or str(d.dim_value) for d in m.graph.output[0].type.tensor_type.shape.dim))")"
check "external data: the references kept, no data file written" "target.bin no-such-file.bin" "$(/usr/bin/python3 -c "
import onnx
m = onnx.load('$dir/out.onnx', load_external_data=False)
print(' '.join(e.value for t in m.graph.initializer for e in t.external_data if e.key == 'location'))")"
fails "external data escaping" "yobx-onnx-shapes: initializer 'target': external data location '../outside/secret.bin' escapes the model's directory" \
    "$dir/escape.onnx" "$dir/out.onnx"
fails "external data absolute" "yobx-onnx-shapes: initializer 'target': external data location '/etc/hostname' is absolute; it must be inside the model's directory" \
    "$dir/absolute.onnx" "$dir/out.onnx"
fails "external data through a symlink" "yobx-onnx-shapes: initializer 'target': external data location 'link.bin' escapes the model's directory" \
    "$dir/symlink.onnx" "$dir/out.onnx"
fails "external data past the end" "yobx-onnx-shapes: initializer 'target': external data 'target.bin' offset 8 and length 16 are past its end (16 bytes)" \
    "$dir/past_end.onnx" "$dir/out.onnx"
fails "a hint for no dim" "yobx-onnx-shapes: hint 'heigth': no input dim is named so (the model's: batch, height, width)" \
    "$dir/conv.onnx" "$dir/out.onnx" --hint heigth=3

"$tool" "$dir/declared.onnx" "$dir/out.onnx" --report "$dir/d.json" > /dev/null
check "a declared shape contradicted: the inferred dim written, the model's reported" "c 1 6 8 (height + 1)//2" "$(/usr/bin/python3 -c "
import json, onnx
r = json.load(open('$dir/d.json'))
m = onnx.load('$dir/out.onnx')
c = [v for v in m.graph.value_info if v.name == 'c'][0].type.tensor_type.shape.dim
print(' '.join(f\"{x['value']} {x['axis']} {x['model']}\" for x in r['contradictions']), c[1].dim_value, c[2].dim_param)")"

"$tool" "$dir/slice.onnx" "$dir/out.onnx" --report "$dir/s.json" > /dev/null
check "an undecidable question in the default mode: no error, ONNX's answer with a fresh symbol" "unk__0,m 'slice' (Slice) Slice with bounds that are not known, or that the ShapeEnv could not place" "$(/usr/bin/python3 -c "
import json, onnx
r = json.load(open('$dir/s.json'))
m = onnx.load('$dir/out.onnx')
f = r['fresh_symbols'][0]
print(','.join(d.dim_param or str(d.dim_value) for d in m.graph.output[0].type.tensor_type.shape.dim), f['node'], f['why'])")"
fails "the same question under --strict" "yobx-onnx-shapes: node 'slice' (Slice): strict mode cannot decide m > n from the model's dims; without strict mode ONNX's rule gives a fresh symbol, and hints (--hint NAME=VALUE) make a draft walk that records the assumption" \
    "$dir/slice.onnx" "$dir/out.onnx" --strict
fails "the same question with a hint for one of its symbols" "yobx-onnx-shapes: node 'slice' (Slice): the draft walk cannot decide m > n: give a hint for each of its symbols (--hint NAME=VALUE)" \
    "$dir/slice.onnx" "$dir/out.onnx" --hint n=5
"$tool" "$dir/slice.onnx" "$dir/out.onnx" --hint n=5 --hint m=2 --report "$dir/s2.json" > /dev/null
check "the same question with hints: answered, the assumption reported" "n + Min(0, m - n),m; 'slice' (Slice) m > n False" "$(/usr/bin/python3 -c "
import json, onnx
r = json.load(open('$dir/s2.json'))
m = onnx.load('$dir/out.onnx')
a = r['assumptions'][0]
print(','.join(d.dim_param or str(d.dim_value) for d in m.graph.output[0].type.tensor_type.shape.dim) + ';', a['node'], a['question'], a['answer'])")"

# memory: x 12*batch*height*width bytes, c 32*batch*((height + 1)//2)*((width + 1)//2), y the same
# over 4; at 2x224x224, step 0 (conv: x and c live) 1204224 + 802816, step 1 (pool: c and y) 802816 + 200704
out=$("$tool" "$dir/conv.onnx" "$dir/out.onnx" --memory --at batch=2 --at height=224 --at width=224 --report "$dir/m.json")
check "memory: summary" "memory: weights 864 B (1 tensors); peak activations
memory at batch=2, height=224, width=224: peak activations 1.91 MiB at step 0 (Conv 'conv'), weights 864 B, total 1.91 MiB" \
    "$(sed -n '2p' <<< "$out" | cut -d' ' -f1-8)
$(tail -1 <<< "$out")"
check "memory: report" "x 12*batch*height*width 1204224 c 32*batch*((height + 1)//2)*((width + 1)//2) 802816 2007040 2007040 0 864 float32" \
    "$(/usr/bin/python3 -c "
import json
m = json.load(open('$dir/m.json'))['memory']
v = {x['name']: x for x in m['values']}
peak = eval(m['peak'], {'Max': max, 'Mod': lambda a, b: a % b}, {'batch': 2, 'height': 224, 'width': 224})
print('x', v['x']['bytes'], v['x']['bytes_at'], 'c', v['c']['bytes'], v['c']['bytes_at'], peak, m['at']['peak'], m['at']['step'],
      m['weights']['total'], ' '.join(m['weights']['by_dtype']))")"
"$tool" "$dir/names.onnx" "$dir/out.onnx" --memory --report "$dir/n.json" > /dev/null
check "memory: a dim_param that is not a symbol name, through the report's mapping" "4*batch_size*(past_sequence_length + 1)" \
    "$(/usr/bin/python3 -c "
import json
print(json.load(open('$dir/n.json'))['memory']['values'][0]['bytes'])")"
check "memory: a size by the dim's name in the model or by its symbol" "64 64" "$(for at in 'batch size=2' batch_size=2; do
    "$tool" "$dir/names.onnx" "$dir/out.onnx" --at "$at" --at past_sequence_length=3 --report "$dir/a.json" > /dev/null
    /usr/bin/python3 -c "import json; print(json.load(open('$dir/a.json'))['memory']['at']['peak'])"
done | tr '\n' ' ' | sed 's/ $//')"
fails "memory: one dim by both its names at two sizes" \
    "yobx-onnx-shapes: sizes 'batch size' (2) and 'batch_size' (3) name the same dim: the model's 'batch size' is the symbol batch_size" \
    "$dir/names.onnx" "$dir/out.onnx" --at "batch size=2" --at batch_size=3
"$tool" "$dir/latin1.onnx" "$dir/out.onnx" --report "$dir/l.json" --at past_sequence_length=3 --plot batch_size=1:8 "$dir/l.svg" > /dev/null
check "names that are not UTF-8: the report is JSON, each such byte as surrogateescape's, and the plot XML" \
    "'batch\\udce9size' -> 'batch_size'; peak at 'r\\udce9lu'; 1 svg" "$(/usr/bin/python3 -c "
import json, xml.etree.ElementTree as ET
r = json.load(open('$dir/l.json', encoding='utf-8'))
svg = ET.parse('$dir/l.svg').getroot()
print(ascii(r['name_mapping'][0]['dim_param']), '->', ascii(r['name_mapping'][0]['symbol']) + '; peak at',
      ascii(r['memory']['peak_steps'][0]['node']) + ';', len(r['memory']['peak_steps']), svg.tag.split('}')[1])")"
e_acute=$'\xe9'  # Latin-1's: the CLI prints a name's bytes as they are
fails "an input named in bytes that are not UTF-8, produced by nothing" \
    "yobx-onnx-shapes: node 'r${e_acute}lu' (Relu): input '${e_acute}' is produced by no node, initializer or graph input" \
    "$dir/latin1_dangling.onnx" "$dir/out.onnx"
"$tool" "$dir/conv.onnx" "$dir/out.onnx" --at batch=2 --at width=64 --plot height=1:1000 "$dir/conv.svg" > /dev/null
check "memory plot: an SVG whose series are the peak's values" "ok 251 3" "$(/usr/bin/python3 -c "
import json, xml.etree.ElementTree as ET
svg = ET.parse('$dir/conv.svg').getroot()
ns = '{http://www.w3.org/2000/svg}'
series = {p.get('data-name'): p for p in svg.iter(ns + 'polyline')}
peak = json.load(open('$dir/m.json'))['memory']['peak']
p = series['peak activations']
xs, ys = [int(v) for v in p.get('data-x').split()], [int(v) for v in p.get('data-bytes').split()]
ok = all(y == eval(peak, {'Max': max, 'Mod': lambda a, b: a % b}, {'batch': 2, 'height': x, 'width': 64}) for x, y in zip(xs, ys))
print('ok' if ok and len(xs) == len(ys) else 'wrong', len(xs), len(series))")"
fails "memory: a misspelt size" "yobx-onnx-shapes: memory: size 'hieght' names no dim of the model (its symbols: batch, height, width)" \
    "$dir/conv.onnx" "$dir/out.onnx" --memory --at hieght=3
fails "memory plot: a size missing" "yobx-onnx-shapes: memory: no size for 'batch', 'width' (the peak's symbols: batch, height, width)" \
    "$dir/conv.onnx" "$dir/out.onnx" --plot height=1:100 "$dir/p.svg"
fails "memory plot: a dim the peak does not depend on" \
    "yobx-onnx-shapes: memory plot: the peak does not depend on 'n' (its symbols: batch, height, width)" \
    "$dir/conv.onnx" "$dir/out.onnx" --plot n=1:100 "$dir/p.svg"
fails "memory plot in a missing directory" "yobx-onnx-shapes: cannot write the plot '$dir/no/p.svg'" \
    "$dir/conv.onnx" "$dir/out.onnx" --at batch=1 --at width=8 --plot height=1:100 "$dir/no/p.svg"
fails_usage "memory: a size that is not one" "yobx-onnx-shapes: --at 'batch=two': expected NAME=VALUE with VALUE a size (an integer >= 0)" \
    "$dir/conv.onnx" "$dir/out.onnx" --at batch=two
fails_usage "memory plot: a range that is not one" "yobx-onnx-shapes: --plot 'height=9:3': expected NAME=LO:HI with sizes 0 <= LO <= HI" \
    "$dir/conv.onnx" "$dir/out.onnx" --plot height=9:3 "$dir/p.svg"
# a size past int64 was read as 0 (from_chars's pointer checked, not its error); a name given twice kept the last
fails "memory: a size past int64" \
    "yobx-onnx-shapes: --at 'batch=99999999999999999999': 99999999999999999999 is past int64 (at most 9223372036854775807)" \
    "$dir/conv.onnx" "$dir/out.onnx" --at batch=99999999999999999999
fails "memory plot: a bound past int64" \
    "yobx-onnx-shapes: --plot 'height=0:99999999999999999999': 99999999999999999999 is past int64 (at most 9223372036854775807)" \
    "$dir/conv.onnx" "$dir/out.onnx" --plot height=0:99999999999999999999 "$dir/p.svg"
fails "hint past int64" \
    "yobx-onnx-shapes: --hint 'n=18446744073709551616': 18446744073709551616 is past int64 (at most 9223372036854775807)" \
    "$dir/conv.onnx" "$dir/out.onnx" --hint n=18446744073709551616
fails "memory: a size given twice" "yobx-onnx-shapes: --at 'batch=3': batch is given twice (first as 2)" \
    "$dir/conv.onnx" "$dir/out.onnx" --at batch=2 --at batch=3
# the domain: input dims from 1, or from --min; every kept step of the peak with a witness in it
"$tool" "$dir/conv.onnx" "$dir/out.onnx" --memory --min height=224 --min width=224 --report "$dir/min.json" > /dev/null
check "memory: --min narrows the domain, each kept step witnessed there" "batch=1 height=224 width=224; 0 unresolved; witnessed" \
    "$(/usr/bin/python3 -c "
import json
m = json.load(open('$dir/min.json'))['memory']
print(' '.join(f'{k}={v}' for k, v in sorted(m['smallest'].items())) + ';', m['unresolved'], 'unresolved;',
      'witnessed' if all(s['witness'] and s['witness']['height'] >= 224 and s['witness']['width'] >= 224 for s in m['peak_steps']) else 'not')")"
fails "memory: a size below --min" "yobx-onnx-shapes: memory: size height=100 is below its minimum 224" \
    "$dir/conv.onnx" "$dir/out.onnx" --min height=224 --at batch=1 --at height=100 --at width=224
fails "memory: --min naming no dim" "yobx-onnx-shapes: memory: minimum 'hieght' names no dim of the model (its symbols: batch, height, width)" \
    "$dir/conv.onnx" "$dir/out.onnx" --min hieght=224
fails "memory: --min given twice" "yobx-onnx-shapes: --min 'batch=3': batch is given twice (first as 2)" \
    "$dir/conv.onnx" "$dir/out.onnx" --min batch=2 --min batch=3
fails "memory: --min past int64" \
    "yobx-onnx-shapes: --min 'batch=99999999999999999999': 99999999999999999999 is past int64 (at most 9223372036854775807)" \
    "$dir/conv.onnx" "$dir/out.onnx" --min batch=99999999999999999999
fails "memory plot below --min" "yobx-onnx-shapes: memory: size height=1 is below its minimum 224" \
    "$dir/conv.onnx" "$dir/out.onnx" --min height=224 --at batch=1 --at width=224 --plot height=1:100 "$dir/min.svg"
fails "hint given twice" "yobx-onnx-shapes: --hint 'n=3': n is given twice (first as 3)" \
    "$dir/conv.onnx" "$dir/out.onnx" --hint n=3 --hint n=3
fails_usage "memory: a size with a plus sign" "yobx-onnx-shapes: --at 'batch=+2': expected NAME=VALUE with VALUE a size (an integer >= 0)" \
    "$dir/conv.onnx" "$dir/out.onnx" --at batch=+2
fails_usage "memory plot without its file" "yobx-onnx-shapes: --plot needs a value" "$dir/conv.onnx" "$dir/out.onnx" --plot height=1:3
fails "missing file" "yobx-onnx-shapes: cannot open '$dir/none.onnx'" "$dir/none.onnx" "$dir/out.onnx"
head -c 300 "$dir/conv.onnx" > "$dir/truncated.onnx"
fails "truncated model" "yobx-onnx-shapes: '$dir/truncated.onnx' is not an ONNX model (the protobuf does not parse: malformed or truncated)" \
    "$dir/truncated.onnx" "$dir/out.onnx"
printf 'not a model at all' > "$dir/garbage.onnx"
fails "garbage" "yobx-onnx-shapes: '$dir/garbage.onnx' is not an ONNX model (the protobuf does not parse: malformed or truncated)" \
    "$dir/garbage.onnx" "$dir/out.onnx"
: > "$dir/empty.onnx"
fails "empty file" "yobx-onnx-shapes: '$dir/empty.onnx' is not an ONNX model (the protobuf does not parse: malformed or truncated)" \
    "$dir/empty.onnx" "$dir/out.onnx"
fails "opset 30" "yobx-onnx-shapes: unknown opset 30 of the default domain (yobx knows 7 to 28)" "$dir/opset30.onnx" "$dir/out.onnx"
fails "opset 6" "yobx-onnx-shapes: unknown opset 6 of the default domain (yobx knows 7 to 28)" "$dir/opset6.onnx" "$dir/out.onnx"
fails "not a DAG" "yobx-onnx-shapes: the graph is not a DAG: node 'r1' (Relu) depends on itself through 'a'" "$dir/cycle.onnx" "$dir/out.onnx"
fails "dangling input" "yobx-onnx-shapes: node 'add' (Add): input 'nowhere' is produced by no node, initializer or graph input" \
    "$dir/dangling.onnx" "$dir/out.onnx"
fails "dangling input, control characters in the names" \
    "yobx-onnx-shapes: node 'a\\r\\nb\\x01' (Add): input 'no\\nwhere' is produced by no node, initializer or graph input" \
    "$dir/dangling_newline.onnx" "$dir/out.onnx"
fails_usage "bad hint" "yobx-onnx-shapes: --hint 'n=-2': expected NAME=VALUE with VALUE a size (an integer >= 0)" \
    "$dir/conv.onnx" "$dir/out.onnx" --hint n=-2
fails_usage "unknown option" "yobx-onnx-shapes: unknown option '--fast'" "$dir/conv.onnx" "$dir/out.onnx" --fast
fails_usage "one argument" "yobx-onnx-shapes: IN.onnx and OUT.onnx are required" "$dir/conv.onnx"
fails_usage "an option without its value" "yobx-onnx-shapes: --report needs a value" "$dir/conv.onnx" "$dir/out.onnx" --report
fails_usage "a third file" "yobx-onnx-shapes: unexpected argument '$dir/third.onnx'" "$dir/conv.onnx" "$dir/out.onnx" "$dir/third.onnx"
fails "op profiles that cannot be read" "yobx-onnx-shapes: cannot open '$dir/none.json'" \
    "$dir/custom.onnx" "$dir/out.onnx" --op-profiles "$dir/none.json"
fails "bad profile" "yobx-onnx-shapes: op profiles: \$['mydomain.MyOp'][0].inputs[0]: 'dtype' must name a dtype (float32, int64, ...)" \
    "$dir/custom.onnx" "$dir/out.onnx" --op-profiles "$dir/bad_profiles.json"
fails "report in a missing directory" "yobx-onnx-shapes: cannot write the report '$dir/no/r.json'" \
    "$dir/conv.onnx" "$dir/out.onnx" --report "$dir/no/r.json"

[ $failed -eq 0 ] && echo "cli check ok"
exit $failed
