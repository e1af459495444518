import os
import sys

numbers = [1, 2, 3]
total = sum(numbers)
label = f"total={total}"  # @after_total
print(label, sys.argv[1:], os.environ.get("ASCEND_LENS_TEST_VAR"), os.getcwd())
sys.exit(int(os.environ.get("EXIT_CODE", "0")))
