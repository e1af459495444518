"""A model class in the style of the acllite library's AclLiteModel: load_from_mem, numpy
inputs copied to the device, outputs gathered with get_output_dims / numpy_to_ptr.

usage: acllite_style.py MODEL.om INPUT.npy OUTPUT.npy
"""

import sys

import acl
import numpy as np

ACL_SUCCESS = 0
ACL_MEM_MALLOC_NORMAL_ONLY = 2
ACL_MEMCPY_HOST_TO_DEVICE = 1
ACL_MEMCPY_DEVICE_TO_HOST = 2
ACL_FLOAT = 0
ACL_FLOAT16 = 1


def check(ret, what):
    if ret != ACL_SUCCESS:
        raise RuntimeError(f"{what} failed, error code {ret}")


class AclLiteModel:
    def __init__(self, model_path):
        self._run_mode, ret = acl.rt.get_run_mode()
        check(ret, "get_run_mode")
        self._model_path = model_path
        self._input_buffer = []
        self._output_dataset = None
        self._init_resource()

    def _init_resource(self):
        with open(self._model_path, "rb") as f:
            self._model_bytes = f.read()
        ptr = acl.util.bytes_to_ptr(self._model_bytes)
        work_size, weight_size, ret = acl.mdl.query_size_from_mem(ptr, len(self._model_bytes))
        check(ret, "query_size_from_mem")
        self._work_size, self._weight_size = work_size, weight_size
        self._model_id, ret = acl.mdl.load_from_mem(ptr, len(self._model_bytes))
        check(ret, "load_from_mem")
        self._model_desc = acl.mdl.create_desc()
        check(acl.mdl.get_desc(self._model_desc, self._model_id), "get_desc")
        self._output_size = acl.mdl.get_num_outputs(self._model_desc)
        self._input_num = acl.mdl.get_num_inputs(self._model_desc)
        dataset = acl.mdl.create_dataset()
        for i in range(self._output_size):
            size = acl.mdl.get_output_size_by_index(self._model_desc, i)
            buf, ret = acl.rt.malloc(size, ACL_MEM_MALLOC_NORMAL_ONLY)
            check(ret, "malloc")
            _, ret = acl.mdl.add_dataset_buffer(dataset, acl.create_data_buffer(buf, size))
            check(ret, "add_dataset_buffer")
        self._output_dataset = dataset

    def _gen_input_dataset(self, input_list):
        if len(input_list) != self._input_num:
            raise RuntimeError("input num mismatch")
        dataset = acl.mdl.create_dataset()
        for i, arr in enumerate(input_list):
            size = arr.size * arr.itemsize
            bytes_data = arr.tobytes()
            ptr = acl.util.bytes_to_ptr(bytes_data)
            if len(self._input_buffer) <= i:
                dev, ret = acl.rt.malloc(size, ACL_MEM_MALLOC_NORMAL_ONLY)
                check(ret, "malloc")
                self._input_buffer.append(dev)
            dev = self._input_buffer[i]
            check(acl.rt.memcpy(dev, size, ptr, size, ACL_MEMCPY_HOST_TO_DEVICE), "memcpy")
            _, ret = acl.mdl.add_dataset_buffer(dataset, acl.create_data_buffer(dev, size))
            check(ret, "add_dataset_buffer")
        return dataset

    def execute(self, input_list):
        dataset = self._gen_input_dataset(input_list)
        ret = acl.mdl.execute(self._model_id, dataset, self._output_dataset)
        check(ret, "acl.mdl.execute")
        for i in range(acl.mdl.get_dataset_num_buffers(dataset)):
            acl.destroy_data_buffer(acl.mdl.get_dataset_buffer(dataset, i))
        acl.mdl.destroy_dataset(dataset)
        return self._output_dataset_to_numpy()

    def _output_dataset_to_numpy(self):
        out = []
        for i in range(acl.mdl.get_dataset_num_buffers(self._output_dataset)):
            buf = acl.mdl.get_dataset_buffer(self._output_dataset, i)
            data = acl.get_data_buffer_addr(buf)
            size = int(acl.get_data_buffer_size(buf))
            dims, ret = acl.mdl.get_output_dims(self._model_desc, i)
            check(ret, "get_output_dims")
            dtype = {ACL_FLOAT: np.float32, ACL_FLOAT16: np.float16}[
                acl.mdl.get_output_data_type(self._model_desc, i)
            ]
            tensor = np.zeros(size // np.dtype(dtype).itemsize, dtype=dtype).reshape(
                tuple(dims["dims"])
            )
            ptr = acl.util.numpy_to_ptr(tensor)
            check(
                acl.rt.memcpy(ptr, tensor.nbytes, data, size, ACL_MEMCPY_DEVICE_TO_HOST), "memcpy"
            )
            out.append(tensor)
        return out

    def destroy(self):
        for i in range(acl.mdl.get_dataset_num_buffers(self._output_dataset)):
            buf = acl.mdl.get_dataset_buffer(self._output_dataset, i)
            check(acl.rt.free(acl.get_data_buffer_addr(buf)), "free")
            acl.destroy_data_buffer(buf)
        acl.mdl.destroy_dataset(self._output_dataset)
        for dev in self._input_buffer:
            check(acl.rt.free(dev), "free")
        check(acl.mdl.unload(self._model_id), "unload")
        check(acl.mdl.destroy_desc(self._model_desc), "destroy_desc")


if __name__ == "__main__":
    import warnings

    warnings.simplefilter("ignore")  # numpy_to_ptr's deprecation notice, as on hardware
    check(acl.init(), "init")
    check(acl.rt.set_device(0), "set_device")
    model = AclLiteModel(sys.argv[1])
    result = model.execute([np.load(sys.argv[2])])
    np.save(sys.argv[3], result[0])
    print("sizes", model._work_size, model._weight_size)
    model.destroy()
    check(acl.rt.reset_device(0), "reset_device")
    check(acl.finalize(), "finalize")
