import socket

import pytest
from netguard import NetworkBlocked


def test_reaching_past_loopback_fails():
    with pytest.raises(NetworkBlocked):
        socket.create_connection(("93.184.216.34", 443), timeout=1)


def test_loopback_is_allowed():
    server = socket.socket()
    server.bind(("127.0.0.1", 0))
    server.listen(1)
    with socket.create_connection(server.getsockname(), timeout=1):
        pass
    server.close()
