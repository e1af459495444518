import sys
import time

print("looping", flush=True)
count = 0
while True:
    count += 1  # @loop
    if count % 100000 == 0:
        sys.stdout.flush()
        time.sleep(0.001)
