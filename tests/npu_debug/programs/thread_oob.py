import threading

import acl

acl.init()
acl.rt.set_device(0)
results = []


def worker() -> None:
    ctx, ret = acl.rt.create_context(0)
    dev, ret = acl.rt.malloc(64, 0)
    host, ret = acl.rt.malloc_host(128)
    results.append(acl.rt.memcpy(dev, 64, host, 128, 1))  # @oob


t = threading.Thread(target=worker, name="copier")
t.start()
t.join()
print("worker got", results)
