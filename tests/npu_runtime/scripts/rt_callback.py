"""pyACL-style callback sample: a report thread from acl.util.start_thread runs callbacks."""

import sys
import threading

import acl

ACL_CALLBACK_BLOCK = 1
results = []
exit_flag = False

acl.init()
acl.rt.set_device(0)
context, _ = acl.rt.get_context()
stream, _ = acl.rt.create_stream()


def process_callback(args_list):
    ctx, timeout = args_list
    acl.rt.set_context(ctx)
    while not exit_flag:
        acl.rt.process_report(timeout)


def callback(user_data):
    results.append((user_data, threading.get_ident() == tid))


tid, ret = acl.util.start_thread(process_callback, [context, 50])
assert ret == 0, ret
assert acl.rt.launch_callback(callback, ["early"], ACL_CALLBACK_BLOCK, stream) == 107015
assert acl.rt.subscribe_report(tid, stream) == 0
for i in range(3):
    assert acl.rt.launch_callback(callback, [i], ACL_CALLBACK_BLOCK, stream) == 0
assert acl.rt.synchronize_stream(stream) == 0
exit_flag = True
assert acl.util.stop_thread(tid) == 0
assert acl.rt.unsubscribe_report(tid, stream) == 0
acl.rt.destroy_stream(stream)
acl.rt.reset_device(0)
acl.finalize()
if results != [([0], True), ([1], True), ([2], True)]:  # in order, on the report thread
    print("callbacks ran as", results, file=sys.stderr)
    sys.exit(3)
print("callbacks ok")
