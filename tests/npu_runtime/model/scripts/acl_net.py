"""Image classification in the structure of Ascend/samples' ResNet-50 `acl_net.py`:
init, load, descs, datasets, execute, read back, unload; every ret checked by the script.

usage: acl_net.py MODEL.om INPUT.npy OUTPUT.npy [BATCH]
"""

import sys

import acl
import numpy as np

ACL_MEM_MALLOC_HUGE_FIRST = 0
ACL_MEMCPY_HOST_TO_DEVICE = 1
ACL_MEMCPY_DEVICE_TO_HOST = 2
ACL_SUCCESS = 0
NPY_BY_ACL = {0: np.float32, 1: np.float16, 3: np.int32, 9: np.int64}


def check_ret(message, ret):
    if ret != ACL_SUCCESS:
        raise Exception(f"{message} failed ret={ret}")


class Net:
    def __init__(self, device_id, model_path):
        self.device_id = device_id
        self.model_path = model_path
        self.model_id = None
        self.context = None
        self.stream = None
        self.input_data = []
        self.output_data = []
        self.model_desc = None
        self.load_input_dataset = None
        self.load_output_dataset = None
        self.init_resource()

    def init_resource(self):
        ret = acl.init()
        check_ret("acl.init", ret)
        ret = acl.rt.set_device(self.device_id)
        check_ret("acl.rt.set_device", ret)
        self.context, ret = acl.rt.create_context(self.device_id)
        check_ret("acl.rt.create_context", ret)
        self.stream, ret = acl.rt.create_stream()
        check_ret("acl.rt.create_stream", ret)
        self.model_id, ret = acl.mdl.load_from_file(self.model_path)
        check_ret("acl.mdl.load_from_file", ret)
        self.model_desc = acl.mdl.create_desc()
        ret = acl.mdl.get_desc(self.model_desc, self.model_id)
        check_ret("acl.mdl.get_desc", ret)
        self._gen_output_dataset(acl.mdl.get_num_outputs(self.model_desc))

    def _gen_output_dataset(self, size):
        self.load_output_dataset = acl.mdl.create_dataset()
        for i in range(size):
            buffer_size = acl.mdl.get_output_size_by_index(self.model_desc, i)
            buffer, ret = acl.rt.malloc(buffer_size, ACL_MEM_MALLOC_HUGE_FIRST)
            check_ret("acl.rt.malloc", ret)
            data = acl.create_data_buffer(buffer, buffer_size)
            _, ret = acl.mdl.add_dataset_buffer(self.load_output_dataset, data)
            check_ret("acl.mdl.add_dataset_buffer", ret)
            self.output_data.append({"buffer": buffer, "size": buffer_size})

    def _gen_input_dataset(self, images, batch):
        self.load_input_dataset = acl.mdl.create_dataset()
        for i in range(acl.mdl.get_num_inputs(self.model_desc)):
            name = acl.mdl.get_input_name_by_index(self.model_desc, i)
            size = acl.mdl.get_input_size_by_index(self.model_desc, i)
            buffer, ret = acl.rt.malloc(size, ACL_MEM_MALLOC_HUGE_FIRST)
            check_ret("acl.rt.malloc", ret)
            if name != "ascend_mbatch_shape_data":
                bytes_data = np.ascontiguousarray(images[i]).tobytes()
                ptr = acl.util.bytes_to_ptr(bytes_data)
                ret = acl.rt.memcpy(buffer, size, ptr, len(bytes_data), ACL_MEMCPY_HOST_TO_DEVICE)
                check_ret("acl.rt.memcpy", ret)
            dataset_buffer = acl.create_data_buffer(buffer, size)
            _, ret = acl.mdl.add_dataset_buffer(self.load_input_dataset, dataset_buffer)
            check_ret("acl.mdl.add_dataset_buffer", ret)
            self.input_data.append({"buffer": buffer, "size": size})
        if batch is not None:
            index, ret = acl.mdl.get_input_index_by_name(
                self.model_desc, "ascend_mbatch_shape_data"
            )
            check_ret("acl.mdl.get_input_index_by_name", ret)
            ret = acl.mdl.set_dynamic_batch_size(
                self.model_id, self.load_input_dataset, index, batch
            )
            check_ret("acl.mdl.set_dynamic_batch_size", ret)

    def run(self, images, batch=None):
        self._gen_input_dataset(images, batch)
        ret = acl.mdl.execute(self.model_id, self.load_input_dataset, self.load_output_dataset)
        check_ret("acl.mdl.execute", ret)
        return self._output_to_host()

    def _output_to_host(self):
        results = []
        for i, item in enumerate(self.output_data):
            dims, ret = acl.mdl.get_cur_output_dims(self.model_desc, i)
            check_ret("acl.mdl.get_cur_output_dims", ret)
            dtype = NPY_BY_ACL[acl.mdl.get_output_data_type(self.model_desc, i)]
            nbytes = int(np.prod(dims["dims"])) * np.dtype(dtype).itemsize
            host = bytes(nbytes)
            ptr = acl.util.bytes_to_ptr(host)
            ret = acl.rt.memcpy(ptr, nbytes, item["buffer"], nbytes, ACL_MEMCPY_DEVICE_TO_HOST)
            check_ret("acl.rt.memcpy", ret)
            results.append(np.frombuffer(host, dtype).reshape(dims["dims"]))
        return results

    def release(self):
        for item in self.input_data + self.output_data:
            ret = acl.rt.free(item["buffer"])
            check_ret("acl.rt.free", ret)
        for ds in (self.load_input_dataset, self.load_output_dataset):
            for i in range(acl.mdl.get_dataset_num_buffers(ds)):
                ret = acl.destroy_data_buffer(acl.mdl.get_dataset_buffer(ds, i))
                check_ret("acl.destroy_data_buffer", ret)
            ret = acl.mdl.destroy_dataset(ds)
            check_ret("acl.mdl.destroy_dataset", ret)
        ret = acl.mdl.unload(self.model_id)
        check_ret("acl.mdl.unload", ret)
        ret = acl.mdl.destroy_desc(self.model_desc)
        check_ret("acl.mdl.destroy_desc", ret)
        ret = acl.rt.destroy_stream(self.stream)
        check_ret("acl.rt.destroy_stream", ret)
        ret = acl.rt.destroy_context(self.context)
        check_ret("acl.rt.destroy_context", ret)
        ret = acl.rt.reset_device(self.device_id)
        check_ret("acl.rt.reset_device", ret)
        ret = acl.finalize()
        check_ret("acl.finalize", ret)


if __name__ == "__main__":
    model, image_file, out_file = sys.argv[1:4]
    batch = int(sys.argv[4]) if len(sys.argv) > 4 else None
    net = Net(0, model)
    result = net.run([np.load(image_file)], batch)
    np.save(out_file, result[0])
    print("top1", [int(i) for i in np.argmax(result[0], axis=1)])
    net.release()
