#!/usr/bin/env python3
"""A mutation-fuzzing campaign over the inputs a user hands Cohort's programs (issue 39's
"fuzzing run of your own"): each run is one process (cohort-train, cohort-im2rec, cohort-model)
on a mutated input, under a 30 s timeout and a 6 GiB address-space cap, its outcome classified:

  ok           exit 0                    refused      exit 2 (a clean error naming its cause)
  error        exit 1 (an error message, no crash)
  crash        killed by a signal        hang          past the timeout
  memory       peak RSS above 4 GiB (unbounded memory)
  accepted-invalid  exit 0 (or an image packed) on an input a strict reference refuses: a YAML
               parser that rejects duplicate keys, djpeg, a strict PNG reader (chunk CRCs,
               zlib stream, sizes), MXNet 1.9.1's own readers (mx.nd.load, mx.sym.load; with
               MXNET_PYTHON pointing at its venv's python)

Surfaces: yaml (cohort-train configs), jpeg and png (image bytes through cohort-im2rec --resize),
lst (cohort-im2rec list files), states (optimizer states on resume), symbol (symbol JSON through
cohort-model summary), env (COHORT_* environment values). Seeds are fresh unless --seed.
Prints one JSON line per surface with its counts by outcome, then the totals; each finding's
input is kept under OUT/findings. Needs a build (build/apps), djpeg and cjpeg
(libjpeg-turbo-progs) and python3-yaml, which scripts/setup.sh installs.
    scripts/fuzz-campaign.py --runs 3000 [--out DIR] [--seed S]
"""
import argparse
import json
import os
import random
import resource
import shutil
import signal
import struct
import subprocess
import sys
import tempfile
import time
import zlib

ROOT = os.path.join(os.path.dirname(os.path.abspath(__file__)), '..')
APPS = os.path.join(ROOT, 'build', 'apps')
TIMEOUT_S = 30
ADDRESS_CAP = 6 << 30
MEMORY_FLAG = 4 << 30


def run(args, env=None, cwd=None):
    """(outcome, exit status, peak RSS bytes, stderr tail) of one process."""
    def limits():
        resource.setrlimit(resource.RLIMIT_AS, (ADDRESS_CAP, ADDRESS_CAP))
        os.setsid()
    full_env = dict(os.environ, COHORT_NUM_THREADS='1')
    full_env.update(env or {})
    p = subprocess.Popen(args, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, env=full_env,
                         cwd=cwd, preexec_fn=limits)
    start = time.time()
    timed_out = False
    while True:
        pid, status, usage = os.wait4(p.pid, os.WNOHANG)
        if pid:
            break
        if time.time() - start > TIMEOUT_S:
            os.killpg(p.pid, signal.SIGKILL)
            timed_out = True
            pid, status, usage = os.wait4(p.pid, 0)
            break
        time.sleep(0.01)
    err = p.stderr.read().decode('utf-8', 'replace')[-300:]
    rss = usage.ru_maxrss * 1024
    if timed_out:
        return 'hang', None, rss, err
    if os.WIFSIGNALED(status):
        return 'crash', -os.WTERMSIG(status), rss, err
    code = os.WEXITSTATUS(status)
    if rss > MEMORY_FLAG:
        return 'memory', code, rss, err
    return {0: 'ok', 2: 'refused'}.get(code, 'error'), code, rss, err


# ---- mutations

def mutate_bytes(data, rng):
    data = bytearray(data)
    for _ in range(rng.randint(1, 8)):
        kind = rng.random()
        if not data or kind < 0.15:
            data += bytes(rng.randrange(256) for _ in range(rng.randint(1, 16)))
        elif kind < 0.5:
            data[rng.randrange(len(data))] = rng.randrange(256)
        elif kind < 0.65:
            i = rng.randrange(len(data))
            del data[i:i + rng.randint(1, 64)]
        elif kind < 0.8:
            i = rng.randrange(len(data))
            data[i:i] = data[i:i + rng.randint(1, 64)] * rng.randint(1, 4)
        elif kind < 0.9:
            data = data[:rng.randrange(len(data) + 1)]
        else:  # an extreme number where there are digits
            digits = [i for i, b in enumerate(data) if 48 <= b <= 57]
            if digits:
                i = rng.choice(digits)
                data[i:i + 1] = rng.choice([b'99999999999', b'-1', b'0', b'1e308', b'nan'])
    return bytes(data)


def mutate_text(text, rng):
    lines = text.split('\n')
    for _ in range(rng.randint(1, 4)):
        kind = rng.random()
        i = rng.randrange(len(lines))
        if kind < 0.25:  # a duplicate key (or line)
            lines.insert(rng.randrange(len(lines) + 1), lines[i])
        elif kind < 0.45:
            del lines[i]
        elif kind < 0.7 and ':' in lines[i]:
            key = lines[i].split(':', 1)[0]
            lines[i] = key + ': ' + rng.choice(
                ['-1', '0', '1e9', 'nan', '"x"', '[]', '{}', 'true', '', '1e-320', '[1, 2, 3]',
                 '99999999999999999999', 'null', '"../../etc"', "'\\x00'"])
        else:
            return mutate_bytes('\n'.join(lines).encode(), rng).decode('utf-8', 'replace')
    return '\n'.join(lines)


# ---- strict references

class _DuplicateKeys(Exception):
    pass


def yaml_refuses(text):
    import yaml

    class Strict(yaml.SafeLoader):
        pass

    def mapping(loader, node, deep=False):
        keys = set()
        for key_node, _ in node.value:
            key = loader.construct_object(key_node, deep=deep)
            if key in keys:
                raise _DuplicateKeys(key)
            keys.add(key)
        return loader.construct_mapping(node, deep)
    Strict.add_constructor(yaml.resolver.BaseResolver.DEFAULT_MAPPING_TAG, mapping)
    try:
        yaml.load(text, Loader=Strict)
        return False
    except Exception:  # a parse error or a duplicate key
        return True


def djpeg_refuses(path):
    """djpeg's error, or its warning that the data is corrupt (a warning that leaves the pixels
    whole, an unknown JFIF revision say, is not a refusal)."""
    out = subprocess.run(['djpeg', '-outfile', os.devnull, path], capture_output=True,
                         timeout=TIMEOUT_S)
    err = out.stderr.decode('utf-8', 'replace')
    return out.returncode == 1 or any(w in err for w in (
        'Corrupt JPEG data', 'Premature end', 'Inconsistent progression'))


def png_refuses(data):
    """libpng's strictness on what matters here: signature, chunk CRCs, IHDR, a complete zlib
    stream of exactly the image's bytes, IEND."""
    if data[:8] != b'\x89PNG\r\n\x1a\n':
        return True
    at, idat, ihdr, ended = 8, b'', None, False
    while at + 8 <= len(data):
        length, kind = struct.unpack('>I4s', data[at:at + 8])
        body = data[at + 8:at + 8 + length]
        if len(body) != length or at + 12 + length > len(data):
            return True
        crc = struct.unpack('>I', data[at + 8 + length:at + 12 + length])[0]
        if zlib.crc32(kind + body) != crc:
            return True
        if kind == b'IHDR':
            ihdr = struct.unpack('>IIBBBBB', body)
        elif kind == b'IDAT':
            idat += body
        elif kind == b'IEND':
            ended = True
            break
        at += 12 + length
    if ihdr is None or not ended:
        return True
    width, height, depth, color, _, _, interlace = ihdr
    channels = {0: 1, 2: 3, 3: 1, 4: 2, 6: 4}.get(color)
    if channels is None or width == 0 or height == 0 or interlace not in (0, 1):
        return True
    if interlace:
        return False  # sizes of Adam7 passes: not checked here
    try:
        d = zlib.decompressobj()
        raw = d.decompress(idat, 1 << 28)
        if not d.eof:
            return True
    except zlib.error:
        return True
    return len(raw) != height * (1 + (width * channels * depth + 7) // 8)


# ---- surfaces

TINY_CSV_CONFIG = """model:
  name: mlp
  num_classes: 2
data:
  kind: csv
  train_data_csv: {dir}/x.csv
  train_label_csv: {dir}/y.csv
  data_shape: [4]
batch_size: 8
devices: cpu:0
kvstore: local
optimizer:
  name: sgd
  lr: 0.1
  momentum: 0.9
epochs: 1
seed: 1
log_every: 0
log_level: warn
"""


class Campaign:
    def __init__(self, out, rng):
        self.out, self.rng = out, rng
        self.work = tempfile.mkdtemp(prefix='cohort-fuzz-')
        self.counts = {}
        self.kept = 0  # findings written
        self.deferred = []  # (surface, path) checked against MXNet's readers at the end
        with open(os.path.join(self.work, 'x.csv'), 'w') as f:
            for i in range(32):
                f.write(','.join(str((i * 7 + j) % 5 / 5) for j in range(4)) + '\n')
        with open(os.path.join(self.work, 'y.csv'), 'w') as f:
            f.write('\n'.join(str(i % 2) for i in range(32)) + '\n')
        self.config = TINY_CSV_CONFIG.format(dir=self.work)
        self._seed_images()
        self._seed_checkpoint()

    def _seed_images(self):
        ppm = os.path.join(self.work, 'seed.ppm')
        with open(ppm, 'wb') as f:
            f.write(b'P6 24 16 255\n' + bytes((x * 11 + y * 7) % 256 for y in range(16)
                                              for x in range(24) for _ in range(3)))
        self.jpeg = subprocess.run(['cjpeg', ppm], capture_output=True, check=True).stdout
        rows = b''.join(b'\x00' + bytes((x * 9 + y) % 256 for x in range(24 * 3))
                        for y in range(16))

        def chunk(kind, body):
            return struct.pack('>I', len(body)) + kind + body + \
                struct.pack('>I', zlib.crc32(kind + body))
        self.png = (b'\x89PNG\r\n\x1a\n' + chunk(b'IHDR', struct.pack('>IIBBBBB', 24, 16, 8, 2,
                                                                       0, 0, 0)) +
                    chunk(b'IDAT', zlib.compress(rows)) + chunk(b'IEND', b''))

    def _seed_checkpoint(self):
        cfg = os.path.join(self.work, 'seed.yaml')
        with open(cfg, 'w') as f:
            f.write(self.config)
        subprocess.run([os.path.join(APPS, 'cohort-train'), '--config', cfg, '--set',
                        'checkpoint.prefix=%s/ck' % self.work, '--set', 'epochs=1'], check=True,
                       capture_output=True)
        with open(os.path.join(self.work, 'ck-0001.states'), 'rb') as f:
            self.states_seed = f.read()
        with open(os.path.join(self.work, 'ck-symbol.json')) as f:
            self.symbol_seed = f.read()

    def note(self, surface, outcome, data, suffix, detail=''):
        self.counts.setdefault(surface, {})
        self.counts[surface][outcome] = self.counts[surface].get(outcome, 0) + 1
        if outcome not in ('ok', 'refused'):  # exit 1 kept too: its message is worth a look
            self.kept += 1
            path = os.path.join(self.out, 'findings',
                                '%s-%d-%s%s' % (surface, self.kept, outcome, suffix))
            os.makedirs(os.path.dirname(path), exist_ok=True)
            with open(path, 'wb') as f:
                f.write(data if isinstance(data, bytes) else data.encode())
            if detail:
                with open(path + '.txt', 'w') as f:
                    f.write(detail)

    def yaml(self):
        text = mutate_text(self.config, self.rng)
        path = os.path.join(self.work, 'c.yaml')
        with open(path, 'w') as f:
            f.write(text)
        outcome, _, _, err = run([os.path.join(APPS, 'cohort-train'), '--config', path])
        if outcome == 'ok' and yaml_refuses(text):
            outcome = 'accepted-invalid'
        self.note('yaml', outcome, text, '.yaml', err)

    def image(self, kind):
        data = mutate_bytes(self.jpeg if kind == 'jpeg' else self.png, self.rng)
        folder = os.path.join(self.work, 'img')
        shutil.rmtree(folder, ignore_errors=True)
        os.makedirs(os.path.join(folder, 'a'))
        path = os.path.join(folder, 'a', 'x.' + ('jpg' if kind == 'jpeg' else 'png'))
        with open(path, 'wb') as f:
            f.write(data)
        prefix = os.path.join(self.work, 'img_out')
        outcome, _, _, err = run([os.path.join(APPS, 'cohort-im2rec'), prefix, folder,
                                  '--resize', '12', '--no-shuffle'])
        packed = os.path.exists(prefix + '.idx') and os.path.getsize(prefix + '.idx') > 0
        if outcome == 'ok' and packed:
            refuses = djpeg_refuses(path) if kind == 'jpeg' else png_refuses(data)
            if refuses:
                outcome = 'accepted-invalid'
        for ext in ('.rec', '.idx', '.lst'):
            if os.path.exists(prefix + ext):
                os.remove(prefix + ext)
        self.note(kind, outcome, data, '.' + kind, err)

    def lst(self):
        folder = os.path.join(self.work, 'lstroot')
        os.makedirs(folder, exist_ok=True)
        with open(os.path.join(folder, 'x.jpg'), 'wb') as f:
            f.write(self.jpeg)
        text = mutate_text('0\t0\tx.jpg\n1\t1\tx.jpg\n2\t0.5\tx.jpg\n', self.rng)
        prefix = os.path.join(self.work, 'l')
        with open(prefix + '.lst', 'w') as f:
            f.write(text)
        outcome, _, _, err = run([os.path.join(APPS, 'cohort-im2rec'), prefix, folder])
        self.note('lst', outcome, text, '.lst', err)

    def states(self):
        data = mutate_bytes(self.states_seed, self.rng)
        with open(os.path.join(self.work, 'ck-0001.states'), 'wb') as f:
            f.write(data)
        cfg = os.path.join(self.work, 'resume.yaml')
        with open(cfg, 'w') as f:
            f.write(self.config)
        outcome, _, _, err = run([os.path.join(APPS, 'cohort-train'), '--config', cfg, '--set',
                                  'checkpoint.prefix=%s/ck' % self.work, '--set', 'epochs=2',
                                  '--set', 'resume_epoch=1'])
        for name in ('ck-0002.params', 'ck-0002.states'):
            if os.path.exists(os.path.join(self.work, name)):
                os.remove(os.path.join(self.work, name))
        if outcome == 'ok':
            self.deferred.append(('states', data))
        self.note('states', outcome, data, '.states', err)

    def symbol_json(self):
        text = mutate_text(self.symbol_seed, self.rng)
        path = os.path.join(self.work, 's.json')
        with open(path, 'w') as f:
            f.write(text)
        outcome, _, _, err = run([os.path.join(APPS, 'cohort-model'), 'summary', path,
                                  '--shape', 'data=8,4'])
        if outcome == 'ok':
            self.deferred.append(('symbol', text.encode()))
        self.note('symbol', outcome, text, '.json', err)

    def env(self):
        names = ['COHORT_NUM_THREADS', 'COHORT_KVSTORE_BUCKET_MB', 'COHORT_KVSTORE_OVERLAP',
                 'COHORT_RING_CHUNK_KB', 'COHORT_COLLECTIVE_TIMEOUT', 'COHORT_LOG_LEVEL']
        values = ['-1', '0', '1', '4096', '1e9', 'abc', '', '99999999999999999999', '0x10',
                  ' 2', '2 ', 'nan', '1.5']
        env = {n: self.rng.choice(values) for n in self.rng.sample(names, self.rng.randint(1, 3))}
        cfg = os.path.join(self.work, 'env.yaml')
        with open(cfg, 'w') as f:
            f.write(self.config)
        outcome, _, _, err = run([os.path.join(APPS, 'cohort-train'), '--config', cfg], env=env)
        self.note('env', outcome, json.dumps(env), '.env.json', err)

    def check_deferred(self, mxnet_python):
        """Inputs Cohort accepted that MXNet's own readers refuse: accepted-invalid."""
        if not mxnet_python or not self.deferred:
            return
        folder = os.path.join(self.work, 'deferred')
        os.makedirs(folder, exist_ok=True)
        files = []
        for i, (surface, data) in enumerate(self.deferred):
            path = os.path.join(folder, '%s-%d' % (surface, i))
            with open(path, 'wb') as f:
                f.write(data)
            files.append((surface, path))
        script = ("import sys, json, mxnet as mx\n"
                  "out = []\n"
                  "for surface, path in json.load(sys.stdin):\n"
                  "    try:\n"
                  "        mx.nd.load(path) if surface == 'states' else mx.sym.load(path)\n"
                  "        out.append(False)\n"
                  "    except Exception:\n"
                  "        out.append(True)\n"
                  "print(json.dumps(out))\n")
        got = subprocess.run([mxnet_python, '-c', script], input=json.dumps(files).encode(),
                             capture_output=True, timeout=600)
        refused = json.loads(got.stdout.decode().strip().splitlines()[-1])
        for (surface, path), mx_refuses in zip(files, refused):
            if mx_refuses:
                self.counts[surface]['ok'] -= 1
                with open(path, 'rb') as f:
                    self.note(surface, 'accepted-invalid', f.read(), '.bin', 'MXNet refuses')


def main():
    parser = argparse.ArgumentParser(description=__doc__.split('\n')[0])
    parser.add_argument('--runs', type=int, default=3000)
    parser.add_argument('--out', default='fuzz-campaign-out')
    parser.add_argument('--seed', type=int, default=None)
    args = parser.parse_args()
    seed = args.seed if args.seed is not None else random.SystemRandom().randrange(1 << 32)
    rng = random.Random(seed)
    os.makedirs(args.out, exist_ok=True)
    campaign = Campaign(args.out, rng)
    surfaces = [campaign.yaml, lambda: campaign.image('jpeg'), lambda: campaign.image('png'),
                campaign.lst, campaign.states, campaign.symbol_json, campaign.env]
    names = ['yaml', 'jpeg', 'png', 'lst', 'states', 'symbol', 'env']
    start = time.time()
    for i in range(args.runs):
        surfaces[i % len(surfaces)]()
    campaign.check_deferred(os.environ.get('MXNET_PYTHON'))
    totals = {}
    for name in names:
        counts = campaign.counts.get(name, {})
        for k, v in counts.items():
            totals[k] = totals.get(k, 0) + v
        print(json.dumps({'surface': name, 'runs': sum(counts.values()), **counts}))
    print(json.dumps({'surface': 'all', 'runs': sum(totals.values()), 'seed': seed,
                      'seconds': round(time.time() - start), **totals}))
    shutil.rmtree(campaign.work, ignore_errors=True)
    bad = sum(totals.get(k, 0) for k in ('crash', 'hang', 'memory', 'accepted-invalid'))
    sys.exit(1 if bad else 0)


if __name__ == '__main__':
    main()
