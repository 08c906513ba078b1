"""A small synthetic corpus of simple, correct helper functions (Python, JavaScript, TypeScript).

Why: the npm and Debian code the model learns from is library code; the short app-style helpers people type
in an editor (`add`, `isEven`, `factorial`, a `Stack` class) are rare in it (`return a + b` occurs 45 times in
104 MB), so the small model did not connect a function's name with its body. These modules are written from
templates by this script (ours, MIT), a few percent of the training bytes.

Held out: the ops in HELDOUT_OPS never appear in the synthetic files, so that their greedy completions (model
card) show whether the model generalises from names, not whether it remembers templates. `add` and
`fibonacci` ARE in the synthetic set: the two examples of the issue's "done" check are in-distribution.

usage: /usr/bin/python3 -m tools.model.synthetic --out tools/model/data/synthetic.jsonl [--bytes 3000000]
"""
from __future__ import annotations

import argparse
import json
import random

# name variants per language style: (snake, camel)
PAIRS = [("a", "b"), ("x", "y"), ("left", "right"), ("first", "second"), ("num1", "num2"), ("m", "n"), ("p", "q")]
UNARY = ["n", "x", "value", "num", "number"]

# op: (python name, js name, arity, python expr, js expr, ts param type, ts return type, doc)
# {0} {1} are the parameters
OPS = [
    ("add", "add", 2, "{0} + {1}", "{0} + {1}", "number", "number", "Add two numbers."),
    ("subtract", "subtract", 2, "{0} - {1}", "{0} - {1}", "number", "number", "Subtract the second number from the first."),
    ("multiply", "multiply", 2, "{0} * {1}", "{0} * {1}", "number", "number", "Multiply two numbers."),
    ("divide", "divide", 2, "{0} / {1}", "{0} / {1}", "number", "number", "Divide the first number by the second."),
    ("remainder", "remainder", 2, "{0} % {1}", "{0} % {1}", "number", "number", "Remainder of a division."),
    ("power", "power", 2, "{0} ** {1}", "{0} ** {1}", "number", "number", "Raise a number to a power."),
    ("maximum", "max", 2, "max({0}, {1})", "Math.max({0}, {1})", "number", "number", "The larger of two numbers."),
    ("minimum", "min", 2, "min({0}, {1})", "Math.min({0}, {1})", "number", "number", "The smaller of two numbers."),
    ("average", "average", 2, "({0} + {1}) / 2", "({0} + {1}) / 2", "number", "number", "The mean of two numbers."),
    ("is_equal", "isEqual", 2, "{0} == {1}", "{0} === {1}", "number", "boolean", "Whether two values are equal."),
    ("square", "square", 1, "{0} * {0}", "{0} * {0}", "number", "number", "The square of a number."),
    ("cube", "cube", 1, "{0} * {0} * {0}", "{0} * {0} * {0}", "number", "number", "The cube of a number."),
    ("double", "double", 1, "{0} * 2", "{0} * 2", "number", "number", "Twice the number."),
    ("half", "half", 1, "{0} / 2", "{0} / 2", "number", "number", "Half of the number."),
    ("negate", "negate", 1, "-{0}", "-{0}", "number", "number", "The number with its sign flipped."),
    ("absolute", "abs", 1, "abs({0})", "Math.abs({0})", "number", "number", "The absolute value."),
    ("increment", "increment", 1, "{0} + 1", "{0} + 1", "number", "number", "One more than the number."),
    ("decrement", "decrement", 1, "{0} - 1", "{0} - 1", "number", "number", "One less than the number."),
    ("is_even", "isEven", 1, "{0} % 2 == 0", "{0} % 2 === 0", "number", "boolean", "Whether the number is even."),
    ("is_odd", "isOdd", 1, "{0} % 2 != 0", "{0} % 2 !== 0", "number", "boolean", "Whether the number is odd."),
    ("is_positive", "isPositive", 1, "{0} > 0", "{0} > 0", "number", "boolean", "Whether the number is above zero."),
    ("is_negative", "isNegative", 1, "{0} < 0", "{0} < 0", "number", "boolean", "Whether the number is below zero."),
    ("is_zero", "isZero", 1, "{0} == 0", "{0} === 0", "number", "boolean", "Whether the number is zero."),
    ("to_celsius", "toCelsius", 1, "({0} - 32) * 5 / 9", "({0} - 32) * 5 / 9", "number", "number", "Fahrenheit to Celsius."),
    ("to_fahrenheit", "toFahrenheit", 1, "{0} * 9 / 5 + 32", "{0} * 9 / 5 + 32", "number", "number", "Celsius to Fahrenheit."),
    ("greet", "greet", 1, "f\"Hello, {{{0}}}!\"", "`Hello, ${{{0}}}!`", "string", "string", "A greeting for a name."),
    ("shout", "shout", 1, "{0}.upper() + \"!\"", "{0}.toUpperCase() + \"!\"", "string", "string", "The text in capitals."),
    ("to_upper", "toUpper", 1, "{0}.upper()", "{0}.toUpperCase()", "string", "string", "The text in upper case."),
    ("to_lower", "toLower", 1, "{0}.lower()", "{0}.toLowerCase()", "string", "string", "The text in lower case."),
    ("reverse_string", "reverseString", 1, "{0}[::-1]", "{0}.split(\"\").reverse().join(\"\")", "string", "string", "The text backwards."),
    ("capitalize", "capitalize", 1, "{0}[:1].upper() + {0}[1:]", "{0}.charAt(0).toUpperCase() + {0}.slice(1)", "string", "string", "The text with its first letter in capitals."),
    ("is_palindrome", "isPalindrome", 1, "{0} == {0}[::-1]", "{0} === {0}.split(\"\").reverse().join(\"\")", "string", "boolean", "Whether the text reads the same backwards."),
    ("is_blank", "isBlank", 1, "{0}.strip() == \"\"", "{0}.trim() === \"\"", "string", "boolean", "Whether the text is empty or only spaces."),
    ("word_count", "wordCount", 1, "len({0}.split())", "{0}.trim().split(/\\s+/).length", "string", "number", "How many words the text has."),
    ("first_item", "first", 1, "{0}[0]", "{0}[0]", "number[]", "number", "The first element of a list."),
    ("last_item", "last", 1, "{0}[-1]", "{0}[{0}.length - 1]", "number[]", "number", "The last element of a list."),
    ("sum_list", "sum", 1, "sum({0})", "{0}.reduce((total, item) => total + item, 0)", "number[]", "number", "The sum of a list of numbers."),
    ("count_items", "count", 1, "len({0})", "{0}.length", "number[]", "number", "How many elements a list has."),
    ("is_empty", "isEmpty", 1, "len({0}) == 0", "{0}.length === 0", "number[]", "boolean", "Whether a list has no elements."),
    ("largest", "largest", 1, "max({0})", "Math.max(...{0})", "number[]", "number", "The largest number of a list."),
    ("smallest", "smallest", 1, "min({0})", "Math.min(...{0})", "number[]", "number", "The smallest number of a list."),
    ("unique", "unique", 1, "list(dict.fromkeys({0}))", "[...new Set({0})]", "number[]", "number[]", "The list without repeated elements."),
    ("doubled", "doubled", 1, "[item * 2 for item in {0}]", "{0}.map((item) => item * 2)", "number[]", "number[]", "Every number of the list doubled."),
    ("evens", "evens", 1, "[item for item in {0} if item % 2 == 0]", "{0}.filter((item) => item % 2 === 0)", "number[]", "number[]", "The even numbers of a list."),
]
HELDOUT_OPS = {"multiply", "cube", "is_odd", "smallest"}

# multi-line ones, per language; {f} is the function name
BLOCKS_PY = {
    "factorial": ["def {f}(n):", "    if n <= 1:", "        return 1", "    return n * {f}(n - 1)"],
    "fibonacci": ["def {f}(n):", "    if n < 2:", "        return n", "    return {f}(n - 1) + {f}(n - 2)"],
    "fibonacci_loop": ["def fibonacci(n):", "    a, b = 0, 1", "    for _ in range(n):", "        a, b = b, a + b", "    return a"],
    "gcd": ["def gcd(a, b):", "    while b:", "        a, b = b, a % b", "    return a"],
    "clamp": ["def clamp(value, low, high):", "    return max(low, min(value, high))"],
    "is_prime": ["def is_prime(n):", "    if n < 2:", "        return False", "    for i in range(2, int(n ** 0.5) + 1):",
                 "        if n % i == 0:", "            return False", "    return True"],
    "count_vowels": ["def count_vowels(text):", "    return sum(1 for ch in text.lower() if ch in \"aeiou\")"],
    "read_file": ["def read_file(path):", "    with open(path) as f:", "        return f.read()"],
    "write_file": ["def write_file(path, text):", "    with open(path, \"w\") as f:", "        f.write(text)"],
}
BLOCKS_JS = {
    "factorial": ["function {f}(n{T}){R} {{", "  if (n <= 1) {{", "    return 1;", "  }}", "  return n * {f}(n - 1);", "}}"],
    "fibonacci": ["function {f}(n{T}){R} {{", "  if (n < 2) {{", "    return n;", "  }}", "  return {f}(n - 1) + {f}(n - 2);", "}}"],
    "gcd": ["function gcd(a{T}, b{T}){R} {{", "  while (b !== 0) {{", "    [a, b] = [b, a % b];", "  }}", "  return a;", "}}"],
    "clamp": ["function clamp(value{T}, low{T}, high{T}){R} {{", "  return Math.min(Math.max(value, low), high);", "}}"],
    "is_prime": ["function isPrime(n{T}){B} {{", "  if (n < 2) {{", "    return false;", "  }}", "  for (let i = 2; i * i <= n; i++) {{",
                 "    if (n % i === 0) {{", "      return false;", "    }}", "  }}", "  return true;", "}}"],
    "range": ["function range(start{T}, end{T}){A} {{", "  const result{A} = [];", "  for (let i = start; i < end; i++) {{",
              "    result.push(i);", "  }}", "  return result;", "}}"],
}
CLASS_PY = ["class Stack:", "    def __init__(self):", "        self.items = []", "", "    def push(self, item):",
            "        self.items.append(item)", "", "    def pop(self):", "        return self.items.pop()", "",
            "    def peek(self):", "        return self.items[-1]", "", "    def is_empty(self):",
            "        return len(self.items) == 0", "", "    def size(self):", "        return len(self.items)"]
CLASS_TS = ["class Counter {", "  private count = 0;", "", "  increment(): number {", "    this.count += 1;",
            "    return this.count;", "  }", "", "  decrement(): number {", "    this.count -= 1;", "    return this.count;",
            "  }", "", "  reset(): void {", "    this.count = 0;", "  }", "", "  get value(): number {", "    return this.count;",
            "  }", "}"]
CLASS_JS = ["class Stack {", "  constructor() {", "    this.items = [];", "  }", "", "  push(item) {", "    this.items.push(item);",
            "  }", "", "  pop() {", "    return this.items.pop();", "  }", "", "  peek() {",
            "    return this.items[this.items.length - 1];", "  }", "", "  isEmpty() {", "    return this.items.length === 0;",
            "  }", "}"]

SAMPLE_ARGS = {"number": ["2, 3", "10, 4", "7, 5"], "string": ["\"world\"", "\"Ada\"", "\"level\""],
               "number[]": ["[1, 2, 3]", "[4, 8, 15, 16]", "[3, 1, 2]"]}


def unary_param(op, rng):
    t = op[5]
    if t == "string":
        return rng.choice(["text", "name", "s", "word", "value"])
    if t == "number[]":
        return rng.choice(["items", "numbers", "values", "arr", "list_"])
    return rng.choice(UNARY)


def py_function(op, rng):
    pyname, _, arity, pyexpr, _, t, rt, doc = op
    ps = list(rng.choice(PAIRS)) if arity == 2 else [unary_param(op, rng).rstrip("_") or "items"]
    ps = [("values" if p == "list" else p) for p in ps]
    typed = rng.random() < 0.4
    pyt = {"number": "float" if rng.random() < 0.5 else "int", "string": "str", "number[]": "list[int]"}
    if "/" in pyexpr:  # true division: a float whatever goes in
        pyt["number"] = "float"
    rpyt = {"number": pyt["number"], "boolean": "bool", "string": "str", "number[]": "list[int]"}
    sig = ", ".join(f"{p}: {pyt[t]}" if typed else p for p in ps)
    ret = f" -> {rpyt[rt]}" if typed else ""
    lines = [f"def {pyname}({sig}){ret}:"]
    if rng.random() < 0.4:
        lines.append(f'    """{doc}"""')
    lines.append("    return " + pyexpr.format(*ps))
    return lines, (pyname, t, arity)


def js_function(op, rng, ts, indent):
    _, name, arity, _, jsexpr, t, rt, doc = op
    ps = list(rng.choice(PAIRS)) if arity == 2 else [unary_param(op, rng).rstrip("_") or "items"]
    ps = [("values" if p == "list" else p) for p in ps]
    sig = ", ".join(f"{p}: {t}" if ts else p for p in ps)
    r = f": {rt}" if ts else ""
    body = jsexpr.format(*ps)
    exp = "export " if rng.random() < 0.3 else ""
    pre = []
    if rng.random() < 0.3:
        pre = [f"// {doc}"] if rng.random() < 0.5 else ["/**", f" * {doc}", " */"]
    style = rng.random()
    if style < 0.6:
        lines = [f"{exp}function {name}({sig}){r} {{", f"{indent}return {body};", "}"]
    elif style < 0.8:
        lines = [f"{exp}const {name} = ({sig}){r} => {body};"]
    else:
        lines = [f"{exp}const {name} = ({sig}){r} => {{", f"{indent}return {body};", "};"]
    return pre + lines, (name, t, arity)


def reindent(lines, indent):
    return [l.replace("  ", indent) if indent != "  " else l for l in lines]


def block(key, ts, indent):
    T, R = (": number", ": number") if ts else ("", "")
    B, A = (": boolean", ": number[]") if ts else ("", "")
    return reindent([l.format(f=key, T=T, R=R, B=B, A=A) for l in BLOCKS_JS[key]], indent)


def defined_name(lines):
    head = next(l for l in lines if not l.startswith(("/", " *", "#")))
    return head.replace("export ", "").split("(")[0].split(" =")[0].split(" {")[0]


def module(rng, lang):
    indent = "  " if lang == "python" or rng.random() < 0.7 else "    "
    ts = lang == "typescript"
    ops = [o for o in OPS if o[0] not in HELDOUT_OPS]
    parts, calls = [], []
    for _ in range(rng.randint(2, 7)):
        if rng.random() < 0.2:
            if lang == "python":
                key = rng.choice(list(BLOCKS_PY))
                parts.append([l.format(f=key) if "{f}" in l else l for l in BLOCKS_PY[key]])
            elif rng.random() < 0.15:
                parts.append(reindent(CLASS_TS if ts else CLASS_JS, indent))
            else:
                parts.append(block(rng.choice(list(BLOCKS_JS)), ts, indent))
            continue
        if lang == "python" and rng.random() < 0.04:
            parts.append(CLASS_PY)
            continue
        op = rng.choice(ops)
        lines, call = py_function(op, rng) if lang == "python" else js_function(op, rng, ts, indent)
        parts.append(lines)
        calls.append(call)
    seen, uniq = set(), []
    for p in parts:  # one definition per name in a module
        if defined_name(p) not in seen:
            seen.add(defined_name(p))
            uniq.append(p)
    sep = "\n\n\n" if lang == "python" else "\n\n"
    text = sep.join("\n".join(p) for p in uniq) + "\n"
    if calls and rng.random() < 0.5:
        name, t, arity = rng.choice(calls)
        args = rng.choice(SAMPLE_ARGS[t]) if arity == 2 or t != "number" else rng.choice(["4", "7", "10"])
        if arity == 1 and t == "number":
            args = rng.choice(["4", "7", "10"])
        elif arity == 1 and t == "number[]":
            args = rng.choice(SAMPLE_ARGS["number[]"])
        elif arity == 1:
            args = rng.choice(SAMPLE_ARGS["string"])
        text += ("\n\n" if lang == "python" else "\n") + (f"print({name}({args}))\n" if lang == "python"
                                                          else f"console.log({name}({args}));\n")
    return text


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--out", required=True)
    ap.add_argument("--bytes", type=int, default=3_000_000)
    ap.add_argument("--seed", type=int, default=7)
    a = ap.parse_args()
    rng = random.Random(a.seed)
    total = i = 0
    seen = set()
    with open(a.out, "w", encoding="utf-8") as f:
        while total < a.bytes:
            lang = rng.choice(["python", "javascript", "typescript"])
            text = module(rng, lang)
            if text in seen:
                continue
            seen.add(text)
            ext = {"python": "py", "javascript": "js", "typescript": "ts"}[lang]
            f.write(json.dumps({"package": "ghostline-synthetic", "path": f"{lang}/helpers_{i:05d}.{ext}",
                                "language": lang, "text": text}) + "\n")
            total += len(text.encode("utf-8"))
            i += 1
    print(json.dumps({"files": i, "bytes": total, "heldout_ops": sorted(HELDOUT_OPS)}))


if __name__ == "__main__":
    main()
