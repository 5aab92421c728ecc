#!/bin/sh
# Red-team probes, 2026-11-28: recreate the class-mode folders (symlinks, FIFOs and odd names cannot
# live in git as such). Usage: sh make_class_dirs.sh OUT; then
#   quizprep grade OUT/cls1 --exercise attention --jobs 2 --csv OUT/cls1.csv --no-record --timeout 30
set -e
here=$(cd "$(dirname "$0")" && pwd); out=${1:?usage: make_class_dirs.sh OUT}
mkdir -p "$out/cls1" "$out/cls3" "$out/cls4" "$out/cls5"
printf 'TOPSECRET_HOST_TOKEN = "hunter2-from-the-instructors-disk"\nthis line is not python hunter2\n' > "$out/secret.txt"
printf 'root:$6$FAKEsalt$FAKEHASHdoNotUse0123456789:19000:0:99999:7:::\n' > "$out/fake_shadow"
h="$here/class_honest.py.txt"
cp "$h" "$out/cls1/honest.py"; cp "$here/class_hog.py.txt" "$out/cls1/hog.py"; cp "$here/class_peek.py.txt" "$out/cls1/peek.py"
cp "$h" "$out/cls1/=HYPERLINK(\"http:__evil\",\"ok\")+cmd.py"
cp "$h" "$out/cls1/$(printf 'esc\033[32m PASS \033[0m.py')"
cp "$h" "$out/cls1/$(printf 'nl\nzz_fake 100%% passed.py')"
cp "$h" "$out/cls1/-rf.py"
ln -sf "$out/secret.txt" "$out/cls1/leak_symlink.py"
cp "$h" "$out/cls3/alice.py"; ln -sf alice.py "$out/cls3/bob_copies_alice.py"; ln -sf "$out/fake_shadow" "$out/cls3/shadow_leak.py"
cp "$h" "$out/cls4/honest.py"; mkfifo "$out/cls4/fifo.py"; mkdir -p "$out/cls4/dir.py"; ln -sf /dev/zero "$out/cls4/zero.py"
cp "$h" "$out/cls5/b_honest.py"; cp "$here/class_fds.py.txt" "$out/cls5/a_fds.py"
ln -sf /proc/self/environ "$out/env_leak.py"; ln -sf /proc/self/cmdline "$out/cmd_leak.py"
