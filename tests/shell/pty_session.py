#!/usr/bin/env python3
"""pty_session.py SHALE -- drive the shell interactively through a pseudo-terminal.

Checks, in one session on an in-memory database (HOME is a scratch directory):
  1. the banner and the "shale> " prompt;
  2. a statement runs and prints its row;
  3. arrow-up recalls the previous line from the history, left-arrow moves
     the cursor into it and typed text is inserted there (the edited line runs);
  4. a statement split over two lines shows the continuation prompt "   ...> ";
  5. a parse error prints "Parse error: ..." (no line number on a terminal);
  6. .import of a file over 1 MiB shows a progress bar;
  7. .quit ends the session (exit code 1 after that error, as sqlite3) and ~/.shale_history holds the lines.
Prints "ok" and exits 0, or prints what went wrong and exits 1.
"""
import os
import pty
import select
import shutil
import sys
import tempfile
import time

UP, LEFT = "\x1b[A", "\x1b[D"


def main():
    shale = os.path.abspath(sys.argv[1])
    home = tempfile.mkdtemp(prefix="shale-pty-")
    env = dict(os.environ, HOME=home, TERM="xterm")
    pid, fd = pty.fork()
    if pid == 0:
        os.chdir(home)
        os.execve(shale, [shale], env)
    out = b""

    def expect(what, timeout=10.0):
        nonlocal out
        end = time.time() + timeout
        want = what.encode()
        while want not in out:
            left = end - time.time()
            if left <= 0:
                raise AssertionError("timed out waiting for %r; got %r" % (what, out[-400:]))
            r, _, _ = select.select([fd], [], [], left)
            if r:
                try:
                    chunk = os.read(fd, 4096)
                except OSError:
                    chunk = b""
                if not chunk:
                    raise AssertionError("eof waiting for %r; got %r" % (what, out[-400:]))
                out += chunk
        # consume through the match so the next expect looks at new output
        out = out[out.index(want) + len(want):]

    def send(keys):
        for ch in keys:  # one key at a time, as typed
            os.write(fd, ch.encode())
            time.sleep(0.01)

    status = 1
    try:
        expect("Enter \".help\" for usage hints.")
        expect("shale> ")
        send("select 'abc' || 'x';\r")
        expect("\nabcx\r\n")
        expect("shale> ")
        # history: recall, move left past "x';" and insert "d" before it
        send(UP)
        time.sleep(0.2)
        send(LEFT * 9 + "d")
        send("\r")
        expect("\nabcdx\r\n")
        expect("shale> ")
        # continuation prompt
        send("select 3\r")
        expect("   ...> ")
        send("  + 4;\r")
        expect("\n7\r\n")
        expect("shale> ")
        send("selec 1;\r")
        expect("Parse error: near \"selec\": syntax error")
        expect("shale> ")
        # .import of a large file shows a progress bar on a terminal
        with open(os.path.join(home, "big.csv"), "w") as f:
            f.write("a,b\n")
            for i in range(60000):
                f.write("%d,some text to make the file larger than one mebibyte %d\n" % (i, i))
        send(".import --csv big.csv big\r")
        expect("big.csv [")
        expect("%")
        expect("shale> ", timeout=30)
        send("select count(*) from big;\r")
        expect("\n60000\r\n")
        expect("shale> ")
        send(".quit\r")
        _, st = os.waitpid(pid, 0)
        pid = 0
        code = os.WEXITSTATUS(st) if os.WIFEXITED(st) else 128 + os.WTERMSIG(st)
        if code != 1:  # sqlite3 exits 1 after an error, interactive or not
            raise AssertionError("exit code %d" % code)
        hist = open(os.path.join(home, ".shale_history"), "rb").read().replace(b"\\040", b" ")
        for line in (b"select 'abc' || 'x';", b"select 'abcd' || 'x';", b"select 3"):
            if line not in hist:
                raise AssertionError("history lacks %r: %r" % (line, hist))
        print("ok")
        status = 0
    except AssertionError as e:
        print("pty session failed:", e)
    finally:
        if pid:
            try:
                os.kill(pid, 9)
                os.waitpid(pid, 0)
            except OSError:
                pass
        shutil.rmtree(home, ignore_errors=True)
    return status


if __name__ == "__main__":
    sys.exit(main())
