import acl

ACL_MEMCPY_HOST_TO_DEVICE = 1
ret = acl.init()
ret = acl.rt.set_device(0)
dev, ret = acl.rt.malloc(64, 0)
host, ret = acl.rt.malloc_host(128)
code = 0
code = acl.rt.memcpy(dev, 64, host, 128, ACL_MEMCPY_HOST_TO_DEVICE)  # @oob
print("memcpy returned", code)
acl.rt.free(dev)
acl.rt.free_host(host)
