// SPDX-License-Identifier: GPL-2.0
/*
 * loom_drv.c - loom.ko: the platform driver of the Loom accelerator, its
 * /dev/loomN misc devices and the module's parameters.
 *
 * A Loom accelerator on a board is an AXI4-Lite register block plus an
 * interrupt line, described in the device tree by a node compatible with
 * "loom,accel-1.0" (binding: docs/linux-driver.md).  probe() maps the
 * registers, enables the clocks, checks the ID and ISA version through
 * loom_hw.c, resets the accelerator, requests the interrupt (or falls back
 * to polling when the node has none) and registers /dev/loomN.  Everything
 * user space can do goes through that node: ioctls (loom_ioctl.c) and mmap
 * of buffers (loom_buf.c).
 *
 * With testdev=N the module also registers N platform devices of its own,
 * "loom-testdev", which probe against the software device of
 * loom_testdev.c instead of registers: the same driver, minus MMIO and the
 * IRQ line, testable on any machine (tests/qemu).
 *
 * The device outlives its unbinding while files are open (struct
 * loom_dev is reference counted and every open file holds a reference): the
 * jobs are ended, the registers replaced by a stub, and the files get
 * -ENODEV until they close and free their buffers.
 *
 * Quotas: buffers count against the open file (max_file_buffers,
 * max_file_mb) and against the user who opened it (max_user_buffers,
 * max_user_mb), so that one user cannot take the device's whole table of
 * 65,535 handles, or its memory, by opening many files.
 */
#include <linux/clk.h>
#include <linux/dma-mapping.h>
#include <linux/fs.h>
#include <linux/idr.h>
#include <linux/interrupt.h>
#include <linux/io.h>
#include <linux/mod_devicetable.h>
#include <linux/module.h>
#include <linux/platform_device.h>
#include <linux/slab.h>
#include <linux/version.h>

#include "loom_drv.h"

unsigned int loom_debug;
module_param_named(debug, loom_debug, uint, 0644);
MODULE_PARM_DESC(debug, "debug mask: 1 ioctl, 2 buffers, 4 jobs, 8 interrupts, 16 register writes");

unsigned int loom_timeout_ms = 10000;
module_param_named(timeout_ms, loom_timeout_ms, uint, 0444);
MODULE_PARM_DESC(timeout_ms, "job and wait timeout when user space passes 0 (ms, default 10000)");

unsigned int loom_max_buffer_mb = 256;
module_param_named(max_buffer_mb, loom_max_buffer_mb, uint, 0444);
MODULE_PARM_DESC(max_buffer_mb, "largest buffer (MiB, default 256)");

unsigned int loom_max_file_mb = 1024;
module_param_named(max_file_mb, loom_max_file_mb, uint, 0444);
MODULE_PARM_DESC(max_file_mb, "all buffers of one open file (MiB, default 1024)");

unsigned int loom_max_file_buffers = 1024;
module_param_named(max_file_buffers, loom_max_file_buffers, uint, 0444);
MODULE_PARM_DESC(max_file_buffers, "buffers of one open file (default 1024)");

unsigned int loom_max_user_mb = 2048;
module_param_named(max_user_mb, loom_max_user_mb, uint, 0444);
MODULE_PARM_DESC(max_user_mb, "buffer memory of one user on one device, all files (MiB, default 2048)");

unsigned int loom_max_user_buffers = 16384;
module_param_named(max_user_buffers, loom_max_user_buffers, uint, 0444);
MODULE_PARM_DESC(max_user_buffers,
		 "buffer handles of one user on one device, all files (default 16384 of 65535)");

static unsigned int testdev;
module_param(testdev, uint, 0444);
MODULE_PARM_DESC(testdev, "register this many software test devices, no hardware (default 0)");

#define LOOM_MAX_TESTDEVS 8

static DEFINE_IDA(loom_ida);

/* ---- register transports ---- */

static u32 mmio_read(struct loom_hw *hw, u32 off)
{
	return readl(hw->mmio + off);
}

/* writel, not writel_relaxed: its barrier orders the job's instructions
 * and data in coherent memory (on Zynq: non-cacheable, write-buffered)
 * before the START that makes the accelerator fetch them. */
static void mmio_write(struct loom_hw *hw, u32 off, u32 val)
{
	writel(val, hw->mmio + off);
}

static const struct loom_reg_ops loom_mmio_regs = {
	.read = mmio_read,
	.write = mmio_write,
};

/* After unbinding: the registers are gone, reads float high. */
static u32 gone_read(struct loom_hw *hw, u32 off)
{
	return ~0u;
}

static void gone_write(struct loom_hw *hw, u32 off, u32 val)
{
}

static const struct loom_reg_ops loom_gone_regs = {
	.read = gone_read,
	.write = gone_write,
};

/* ---- the device's lifetime ---- */

static void loom_dev_release(struct kref *ref)
{
	struct loom_dev *ldev = container_of(ref, struct loom_dev, ref);

	loom_job_release_dev(ldev);
	WARN_ON(!list_empty(&ldev->mem) || !list_empty(&ldev->users));
	idr_destroy(&ldev->handles);
	put_device(ldev->dev);
	kfree(ldev);
}

void loom_dev_put(struct loom_dev *ldev)
{
	kref_put(&ldev->ref, loom_dev_release);
}

/* ---- file operations ---- */

static int loom_open(struct inode *inode, struct file *filp)
{
	/* misc_open() left the miscdevice here and holds misc_mtx, so
	 * misc_deregister() (and the put in remove) cannot run yet. */
	struct loom_dev *ldev = container_of(filp->private_data, struct loom_dev, misc);
	struct loom_file *lf;

	lf = kzalloc(sizeof(*lf), GFP_KERNEL);
	if (!lf)
		return -ENOMEM;
	/* The opener pays for the file's buffers, whoever uses it later. */
	lf->user = loom_user_get(ldev, filp->f_cred->uid);
	if (!lf->user) {
		kfree(lf);
		return -ENOMEM;
	}
	mutex_init(&lf->lock);
	kref_get(&ldev->ref);
	lf->ldev = ldev;
	filp->private_data = lf;
	return nonseekable_open(inode, filp);
}

/* Closing with a job in flight stops it (SOFT_RESET) and drops the
 * handles; memory a wedged accelerator may still touch stays pinned by the
 * job (loom_job.c). */
static int loom_release(struct inode *inode, struct file *filp)
{
	struct loom_file *lf = filp->private_data;
	struct loom_dev *ldev = lf->ldev;

	loom_job_release(lf);
	loom_buf_free_all(lf);
	loom_user_put(ldev, lf->user);
	mutex_destroy(&lf->lock);
	kfree(lf);
	loom_dev_put(ldev);
	return 0;
}

static int loom_mmap(struct file *filp, struct vm_area_struct *vma)
{
	return loom_buf_mmap(filp->private_data, vma);
}

static const struct file_operations loom_fops = {
	.owner = THIS_MODULE,
	.open = loom_open,
	.release = loom_release,
	.unlocked_ioctl = loom_ioctl,
	.compat_ioctl = compat_ptr_ioctl,
	.mmap = loom_mmap,
};

/* ---- probe and remove ---- */

static struct loom_dev *loom_dev_alloc(struct platform_device *pdev)
{
	struct loom_dev *ldev = kzalloc(sizeof(*ldev), GFP_KERNEL);

	if (!ldev)
		return NULL;
	kref_init(&ldev->ref);
	ldev->dev = get_device(&pdev->dev);
	ldev->hw.dev = ldev->dev;
	ldev->hw.irq = -1;
	mutex_init(&ldev->hw_lock);
	mutex_init(&ldev->buf_lock);
	idr_init(&ldev->handles);
	spin_lock_init(&ldev->mem_lock);
	INIT_LIST_HEAD(&ldev->mem);
	INIT_LIST_HEAD(&ldev->users);
	loom_job_init_dev(ldev);
	return ldev;
}

/* Registers, clocks and interrupt of a real accelerator. */
static int setup_hw(struct loom_dev *ldev, struct platform_device *pdev)
{
	int ret;

	ldev->hw.mmio = devm_platform_ioremap_resource(pdev, 0);
	if (IS_ERR(ldev->hw.mmio))
		return PTR_ERR(ldev->hw.mmio);
	ldev->hw.regs = &loom_mmio_regs;
	ret = devm_clk_bulk_get_all(&pdev->dev, &ldev->clks);
	if (ret < 0)
		return dev_err_probe(&pdev->dev, ret, "cannot get clocks\n");
	ldev->num_clks = ret;
	ret = platform_get_irq_optional(pdev, 0);
	if (ret == -EPROBE_DEFER)
		return ret;
	ldev->hw.irq = ret >= 0 ? ret : -1;
	return clk_bulk_prepare_enable(ldev->num_clks, ldev->clks);
}

static void teardown_hw(struct loom_dev *ldev)
{
	if (!ldev->hw.testdev)
		clk_bulk_disable_unprepare(ldev->num_clks, ldev->clks);
	else
		loom_testdev_destroy(ldev);
}

static int register_misc(struct loom_dev *ldev)
{
	int ret;

	ldev->id = ida_alloc(&loom_ida, GFP_KERNEL);
	if (ldev->id < 0)
		return ldev->id;
	snprintf(ldev->name, sizeof(ldev->name), "loom%d", ldev->id);
	ldev->misc.minor = MISC_DYNAMIC_MINOR;
	ldev->misc.name = ldev->name;
	ldev->misc.fops = &loom_fops;
	ldev->misc.parent = ldev->dev;
	ret = misc_register(&ldev->misc);
	if (ret)
		ida_free(&loom_ida, ldev->id);
	return ret;
}

static int loom_probe(struct platform_device *pdev)
{
	const struct platform_device_id *id = platform_get_device_id(pdev);
	struct loom_dev *ldev;
	int ret;

	ldev = loom_dev_alloc(pdev);
	if (!ldev)
		return -ENOMEM;
	ret = dma_set_mask_and_coherent(&pdev->dev, DMA_BIT_MASK(64));
	if (ret)
		goto err_put;
	if (id && id->driver_data)
		ret = loom_testdev_create(ldev);
	else
		ret = setup_hw(ldev, pdev);
	if (ret)
		goto err_put;
	ret = loom_hw_probe(&ldev->hw);
	if (ret)
		goto err_teardown;
	/* A previous user (U-Boot, an earlier load of the module, a crashed
	 * job) may have left the accelerator busy or an interrupt pending. */
	loom_job_probe_reset(ldev);
	if (ldev->hw.irq >= 0 && !ldev->hw.testdev) {
		ret = request_irq(ldev->hw.irq, loom_job_irq, 0, LOOM_DRV_NAME, ldev);
		if (ret)
			goto err_teardown;
	}
	ret = register_misc(ldev);
	if (ret)
		goto err_free_irq;
	platform_set_drvdata(pdev, ldev);
	loom_info(ldev, "/dev/%s: config %s (0x%08x), hardware version %u, %s%s", ldev->name,
		  loom_hw_config_name(ldev->hw.config_hash), ldev->hw.config_hash,
		  ldev->hw.hw_version >> 16, ldev->hw.irq >= 0 ? "interrupt" : "polling",
		  ldev->hw.testdev ? ", software test device" : "");
	return 0;

err_free_irq:
	if (ldev->hw.irq >= 0 && !ldev->hw.testdev)
		free_irq(ldev->hw.irq, ldev);
err_teardown:
	teardown_hw(ldev);
err_put:
	loom_dev_put(ldev);
	return ret;
}

/* Undoes probe in reverse; open files keep the (gone) device. */
static void loom_unbind(struct platform_device *pdev)
{
	struct loom_dev *ldev = platform_get_drvdata(pdev);

	misc_deregister(&ldev->misc);
	loom_job_stop_dev(ldev);
	if (ldev->hw.irq >= 0 && !ldev->hw.testdev)
		free_irq(ldev->hw.irq, ldev);
	ldev->hw.regs = &loom_gone_regs;
	teardown_hw(ldev);
	ida_free(&loom_ida, ldev->id);
	loom_dev_put(ldev);
}

#if LINUX_VERSION_CODE >= KERNEL_VERSION(6, 11, 0)
static void loom_remove(struct platform_device *pdev)
{
	loom_unbind(pdev);
}
#else
static int loom_remove(struct platform_device *pdev)
{
	loom_unbind(pdev);
	return 0;
}
#endif

static const struct of_device_id loom_of_match[] = {
	{ .compatible = LOOM_DT_COMPATIBLE },
	{ }
};
MODULE_DEVICE_TABLE(of, loom_of_match);

/* driver_data 1: the software test device. */
static const struct platform_device_id loom_ids[] = {
	{ .name = LOOM_TESTDEV_NAME, .driver_data = 1 },
	{ }
};
MODULE_DEVICE_TABLE(platform, loom_ids);

static struct platform_driver loom_driver = {
	.probe = loom_probe,
	.remove = loom_remove,
	.id_table = loom_ids,
	.driver = {
		.name = LOOM_DRV_NAME,
		.of_match_table = loom_of_match,
	},
};

static int check_params(void)
{
	if (!loom_timeout_ms || loom_timeout_ms > LOOM_UAPI_MAX_TIMEOUT_MS) {
		pr_err("loom: timeout_ms=%u: expected 1..%u\n", loom_timeout_ms,
		       LOOM_UAPI_MAX_TIMEOUT_MS);
		return -EINVAL;
	}
	if (!loom_max_buffer_mb || !loom_max_file_mb || !loom_max_file_buffers ||
	    !loom_max_user_mb || !loom_max_user_buffers) {
		pr_err("loom: max_buffer_mb, max_file_mb, max_file_buffers, max_user_mb and max_user_buffers must be > 0\n");
		return -EINVAL;
	}
	/* A buffer's size must fit a size_t (32 bits on Zynq-7000). */
	if ((u64)loom_max_buffer_mb << 20 > SIZE_MAX / 2) {
		pr_err("loom: max_buffer_mb=%u is too large for this machine\n", loom_max_buffer_mb);
		return -EINVAL;
	}
	if (testdev > LOOM_MAX_TESTDEVS) {
		pr_err("loom: testdev=%u: at most %u\n", testdev, LOOM_MAX_TESTDEVS);
		return -EINVAL;
	}
	return 0;
}

static int __init loom_init(void)
{
	int ret = check_params();

	if (ret)
		return ret;
	ret = platform_driver_register(&loom_driver);
	if (ret)
		return ret;
	ret = loom_testdev_register(testdev);
	if (ret)
		goto err_unregister_driver;
	return 0;

err_unregister_driver:
	platform_driver_unregister(&loom_driver);
	return ret;
}

static void __exit loom_exit(void)
{
	loom_testdev_unregister();
	platform_driver_unregister(&loom_driver);
}

module_init(loom_init);
module_exit(loom_exit);

MODULE_DESCRIPTION("Loom deep-learning accelerator");
MODULE_AUTHOR("The Loom authors");
MODULE_LICENSE("GPL");
