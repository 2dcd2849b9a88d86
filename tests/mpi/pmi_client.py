"""A minimal PMI client for the launch tests, written from the wire format.

  pmi_client.py pmi2          PMI-2 over PMI_FD (else PMI_PORT): fullinit, put, fence, get the next rank's
                              value, finalize; prints "pmi2 rank R of N got VALUE"
  pmi_client.py pmi2-abort    fullinit, then abort with a message
  pmi_client.py pmi1-wrong-id PMI-1 initack with an id one bit off this rank's; prints the
                              server's answer and whether the connection was closed
Every socket read waits at most 30 s.
"""
import os
import socket
import sys


def connect_port():
    host, port = os.environ["PMI_PORT"].rsplit(":", 1)
    sock = socket.create_connection((host, int(port)), timeout=30)
    return sock, sock.makefile("rb")


def connect():
    """The inherited PMI_FD when there is one, as MPICH's clients choose, else PMI_PORT."""
    if "PMI_FD" not in os.environ:
        return connect_port()
    sock = socket.socket(fileno=int(os.environ["PMI_FD"]))
    sock.settimeout(30)
    return sock, sock.makefile("rb")


def send_command(sock, body):
    data = body.encode()
    sock.sendall(("%-6d" % len(data)).encode() + data)


def read_command(stream):
    header = stream.read(6)
    if len(header) != 6:
        raise SystemExit("pmi_client: the server closed the connection")
    body = stream.read(int(header)).decode()
    pairs, key, value, in_value, i = {}, "", "", False, 0
    while i < len(body):
        c = body[i]
        if not in_value:
            if c == "=":
                in_value = True
            else:
                key += c
        elif c == ";" and body[i + 1:i + 2] == ";":
            value += ";"
            i += 1
        elif c == ";":
            pairs[key], key, value, in_value = value, "", "", False
        else:
            value += c
        i += 1
    return pairs


def call(sock, stream, body):
    send_command(sock, body)
    reply = read_command(stream)
    if reply.get("rc") != "0":
        raise SystemExit("pmi_client: %s failed: %s" % (body, reply.get("errmsg")))
    return reply


def pmi2_start():
    sock, stream = connect()
    sock.sendall(b"cmd=init pmi_version=2 pmi_subversion=0\n")
    line = stream.readline().decode().strip()
    if "rc=0" not in line:
        raise SystemExit("pmi_client: init refused: " + line)
    pmi_id = os.environ.get("PMI_ID", os.environ["PMI_RANK"])  # as PMI2_Init picks it
    init = call(sock, stream, "cmd=fullinit;pmijobid=%s;pmirank=%s;threaded=FALSE;"
                % (os.environ["PMI_JOBID"], pmi_id))
    return sock, stream, int(init["rank"]), int(init["size"])


def pmi2():
    sock, stream, rank, size = pmi2_start()
    call(sock, stream, "cmd=kvs-put;key=greeting-%d;value=hello;;from=%d;" % (rank, rank))
    call(sock, stream, "cmd=kvs-fence;")
    peer = (rank + 1) % size
    got = call(sock, stream, "cmd=kvs-get;jobid=%s;srcid=%d;key=greeting-%d;"
               % (os.environ["PMI_JOBID"], peer, peer))
    mapping = call(sock, stream, "cmd=info-getjobattr;key=PMI_process_mapping;")
    call(sock, stream, "cmd=kvs-fence;")
    call(sock, stream, "cmd=finalize;")
    print("pmi2 rank %d of %d got %s map %s" % (rank, size, got["value"], mapping["value"]))


def pmi2_abort():
    sock, stream, rank, _ = pmi2_start()
    if rank == 1:
        send_command(sock, "cmd=abort;isworld=TRUE;msg=rank 1 gives up;")
        sock.recv(1)  # the step ends this process
    call(sock, stream, "cmd=kvs-fence;")


def pmi1_wrong_id():
    sock, stream = connect_port()
    near_miss = int(os.environ["PMI_ID"]) ^ 1  # not this rank's secret
    sock.sendall(b"cmd=initack pmiid=%d\n" % near_miss)
    answer = stream.readline().decode().strip()
    closed = stream.read(1) == b""
    print("intruder got '%s' closed=%s" % (answer, closed))


{"pmi2": pmi2, "pmi2-abort": pmi2_abort, "pmi1-wrong-id": pmi1_wrong_id}[sys.argv[1]]()
